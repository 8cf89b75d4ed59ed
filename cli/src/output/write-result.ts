// Writes a successful answer: JSON values in the chosen format, bytes to --output or a pipe.
import { writeFile } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import type { Settings } from '../settings.js';
import { formatValue } from './format.js';
import type { Column } from './table.js';

export interface BinaryResult {
  bytes: Uint8Array;
  contentType: string;
}

export interface OutputTarget {
  /** `--output FILE`; `-` means stdout. */
  file?: string | undefined;
  stdout?: NodeJS.WriteStream;
  stderr?: NodeJS.WriteStream;
}

export function isBinaryResult(value: unknown): value is BinaryResult {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as BinaryResult).bytes instanceof Uint8Array &&
    typeof (value as BinaryResult).contentType === 'string'
  );
}

/** Bytes must never be dumped on a terminal; refuse before sending the request where possible. */
export function checkBinaryTarget(target: OutputTarget, contentType: string): void {
  const stdout = target.stdout ?? process.stdout;
  if (!target.file && stdout.isTTY) {
    throw new UsageError(`the answer is binary (${contentType}); give --output FILE, or redirect stdout`);
  }
}

export async function writeResult(
  value: unknown,
  settings: Settings,
  target: OutputTarget = {},
  columns?: readonly Column[],
): Promise<void> {
  const stdout = target.stdout ?? process.stdout;
  const stderr = target.stderr ?? process.stderr;
  if (isBinaryResult(value)) {
    if (target.file && target.file !== '-') {
      await writeFile(target.file, value.bytes);
      if (!settings.quiet)
        stderr.write(`wrote ${value.bytes.byteLength} bytes (${value.contentType}) to ${target.file}\n`);
      return;
    }
    checkBinaryTarget(target, value.contentType);
    if (!settings.quiet) stdout.write(value.bytes);
    return;
  }
  // 204 and friends: nothing to show.
  if (value === undefined || settings.quiet) return;
  if (typeof value === 'string' && settings.outputFormat === 'table') {
    stdout.write(value.endsWith('\n') ? value : `${value}\n`);
    return;
  }
  stdout.write(await formatValue(value, settings.outputFormat, columns));
}
