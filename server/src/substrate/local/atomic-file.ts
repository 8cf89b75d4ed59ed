// Files another process reads while we write them (the unit's contract, its status, pid files): each is
// written beside its final name and renamed over it, so a reader sees the old content or the new, never
// half of either.
import { randomBytes } from 'node:crypto';
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export async function writeFileAtomic(file: string, data: string, mode = 0o600): Promise<void> {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, data, { mode, flag: 'wx' });
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/**
 * Removes what writeFileAtomic left beside `file` when its process was killed between creating the
 * temporary file and renaming it (issue 33 item 6: a 0-byte os-release.<pid>.<hex>.tmp in a reinstalled
 * machine). Only for a caller that is the file's one writer now (an install holding its service).
 */
export async function removeWriteLeftovers(file: string): Promise<void> {
  const prefix = `${basename(file)}.`;
  for (const name of await readdir(dirname(file)).catch(() => [] as string[])) {
    if (name.startsWith(prefix) && /^\d+\.[0-9a-f]+\.tmp$/.test(name.slice(prefix.length)))
      await rm(join(dirname(file), name), { force: true });
  }
}

export function writeJsonAtomic(file: string, value: unknown, mode = 0o600): Promise<void> {
  return writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`, mode);
}

/** The file's text, or null when it is not there. */
export async function readIfPresent(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if (
      (err as NodeJS.ErrnoException).code === 'ENOENT' ||
      (err as NodeJS.ErrnoException).code === 'ENOTDIR'
    ) {
      return null;
    }
    throw err;
  }
}
