// `svcctl me avatar set FILE`. Imported when it runs.
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { buffer } from 'node:stream/consumers';
import type { ParsedInput } from './argv/spec.js';
import { UsageError } from './errors.js';
import type { GlobalFlags } from './global-options.js';
import { writeResult } from './output/write-result.js';
import { openClient } from './sdk-client.js';
import { requireSignIn, resolveSettings } from './settings.js';

export async function runAvatarSet(input: ParsedInput): Promise<void> {
  const [file] = input.args;
  if (file === undefined) throw new UsageError("missing required argument 'file'");
  const settings = await resolveSettings(input.globals as GlobalFlags);
  requireSignIn(settings);
  const bytes = await readImage(file);
  if (bytes.byteLength === 0) throw new UsageError(`${file === '-' ? 'stdin' : file} is empty`);
  const client = await openClient(settings);
  // The server recognises the image by its bytes; the name is only a courtesy.
  const me = await client.uploadAvatar(bytes, { filename: file === '-' ? 'avatar' : basename(file) });
  await writeResult(me, settings);
}

async function readImage(file: string): Promise<Uint8Array> {
  if (file === '-') return buffer(process.stdin);
  try {
    return await readFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(
      `cannot read ${file}: ${code === 'EISDIR' ? 'it is a directory' : (code ?? (err as Error).message)}`,
    );
  }
}
