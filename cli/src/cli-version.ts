// svcctl's version, read from its package.json at run time: importing the JSON would pull it into
// the build's rootDir. Two levels of layout work: src/ (tests, tsx) and dist/ (installed).
import { readFileSync } from 'node:fs';

let cached: string | undefined;

export function cliVersion(): string {
  cached ??= (
    JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
  ).version;
  return cached;
}
