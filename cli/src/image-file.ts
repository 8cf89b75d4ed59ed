// Reading an image named on the command line (`-` for stdin), for the upload commands.
import { readFile } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import { UsageError } from './errors.js';

export async function readImage(file: string): Promise<Uint8Array> {
  let bytes: Uint8Array;
  if (file === '-') bytes = await buffer(process.stdin);
  else {
    try {
      bytes = await readFile(file);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new UsageError(
        `cannot read ${file}: ${code === 'EISDIR' ? 'it is a directory' : (code ?? (err as Error).message)}`,
      );
    }
  }
  if (bytes.byteLength === 0) throw new UsageError(`${file === '-' ? 'stdin' : file} is empty`);
  return bytes;
}

/** The `ID FILE` arguments of an upload to one thing (an organization's icon, a reseller's images). */
export function idAndImageArgs(args: readonly string[], idName: string): [id: string, file: string] {
  const [id, file] = args;
  if (id === undefined) throw new UsageError(`missing required argument '${idName}'`);
  if (file === undefined) throw new UsageError("missing required argument 'FILE'");
  return [id, file];
}
