// Reading and writing svcctl's small YAML files. Writes go to a temporary file that is renamed into
// place, so a crash or a second svcctl never leaves half a file; the mode is set at creation so a
// secret is never readable by others, not even for a moment.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CliError } from './errors.js';

export type YamlDocument = Record<string, unknown>;

/** The file's top-level mapping; undefined when the file does not exist. */
export async function readYamlFile(path: string): Promise<YamlDocument | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError(`cannot read ${path}: ${(err as Error).message}`);
  }
  const { parse } = await import('yaml');
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new CliError(`${path} is not valid YAML: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new CliError(`${path} must hold a YAML mapping`);
  return doc as YamlDocument;
}

export async function writeYamlFile(path: string, doc: YamlDocument, mode: number): Promise<void> {
  const { stringify } = await import('yaml');
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(tmp, 'wx', mode);
  try {
    await handle.writeFile(stringify(doc), 'utf8');
    // open()'s mode is filtered by the umask; set it exactly.
    await handle.chmod(mode);
    await handle.close();
    await rename(tmp, path);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
}
