// Files another process reads while we write them (the unit's contract, its status, pid files): each is
// written beside its final name and renamed over it, so a reader sees the old content or the new, never
// half of either.
import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';

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
