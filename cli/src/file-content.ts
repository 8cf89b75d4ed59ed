// The text of `files write --from-file`: read whole (the API takes it as one JSON string), refused here
// when it could not be sent as it is, so nothing is sent half right.
import { readFile } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import { WRITE_CAP_BYTES } from './commands/file-write-command.js';
import { UsageError } from './errors.js';

export async function readContent(
  from: string,
  withContent: boolean,
  stdin: NodeJS.ReadableStream = process.stdin,
): Promise<string> {
  if (withContent) throw new UsageError('give --content or --from-file, not both');
  let bytes: Buffer;
  try {
    bytes = from === '-' ? await buffer(stdin) : await readFile(from);
  } catch (err) {
    throw new UsageError(
      `--from-file ${from}: cannot read it: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  const where = from === '-' ? 'stdin' : from;
  if (bytes.length > WRITE_CAP_BYTES) {
    throw new UsageError(
      `--from-file: ${where} is ${bytes.length} bytes, over the 1 MiB files write takes; upload it with svcctl files put`,
    );
  }
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new UsageError(`--from-file: ${where} is not UTF-8 text; upload it with svcctl files put`);
  }
}
