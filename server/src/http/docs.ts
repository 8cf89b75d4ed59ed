// /docs: the reference rendered by `redocly build-docs --inlineBundle`, built once per spec version
// into DATA_DIR and served with a CSP that forbids any request off this origin.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export async function buildDocs(spec: object, cacheDir: string): Promise<string> {
  const json = JSON.stringify(spec);
  const hash = createHash('sha256').update(json).digest('hex').slice(0, 16);
  const out = join(cacheDir, `docs-${hash}.html`);
  if (!existsSync(out)) {
    await mkdir(cacheDir, { recursive: true });
    const specFile = join(cacheDir, `openapi-${hash}.json`);
    await writeFile(specFile, json);
    const cli = join(dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin', 'cli.js');
    const tmp = `${out}.${process.pid}.tmp`;
    await run(process.execPath, [cli, 'build-docs', specFile, '--inlineBundle', '--output', tmp], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    await rename(tmp, out);
  }
  return readFile(out, 'utf8');
}

export const DOCS_CSP =
  "default-src 'none'; script-src 'self' 'unsafe-inline' 'unsafe-eval' blob:; style-src 'self' 'unsafe-inline'; " +
  "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; base-uri 'none'; form-action 'none'; " +
  // No other site may frame the reference (clickjacking); browsers ignore frame-ancestors in a <meta>.
  "frame-ancestors 'none'";
