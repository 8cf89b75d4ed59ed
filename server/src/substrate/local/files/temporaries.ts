// The file layer's own temporary files (issue 33 item 3): uploads (`.svc-upload-`), atomic writes
// (`.svc-write-`) and imports (`.svc-import-`) fill a file under such a name beside its target and rename
// it over the target once whole. They are never the customer's: listings hide them, and what a killed
// writer left is swept. An upload's name carries its writer's pid (`.svc-upload-<pid>.<hex>.tmp`): a file
// whose writer is gone is swept at once; any other only once untouched for an hour (a live transfer
// writes to it, so its mtime stays fresh).
import { constants } from 'node:fs';
import { lstat, open, readdir, unlink, type FileHandle } from 'node:fs/promises';
import { at, openRoot, type VolumeRoot } from './walk.js';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;
const LAYER_TEMPORARY = /^\.svc-(upload|write|import)-[^/]*\.tmp$/;
const SWEPT = /^\.svc-(upload|write)-(?:(\d+)\.)?[0-9a-f]+\.tmp$/;
export const STALE_MS = 60 * 60 * 1000;

/** Whether `name` is a temporary file of the layer, never shown to customers. */
export function isLayerTemporary(name: string): boolean {
  return LAYER_TEMPORARY.test(name);
}

/** The name of a new upload's temporary file, for this process. */
export function uploadTemporaryName(hex: string): string {
  return `.svc-upload-${process.pid}.${hex}.tmp`;
}

/** Whether a process of this pid lives (EPERM: it does, as another user's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the upload and write temporaries of the volume whose writer is gone or that are stale; imports
 * sweep their own (import-target.ts). Answers how many went.
 */
export async function sweepTemporaries(root: VolumeRoot, now = Date.now()): Promise<number> {
  const dir = await openRoot(root);
  try {
    return await sweepDir(dir, now);
  } finally {
    await dir.close();
  }
}

async function sweepDir(dir: FileHandle, now: number): Promise<number> {
  let removed = 0;
  for (const name of await readdir(at(dir, '.')).catch(() => [] as string[])) {
    const stats = await lstat(at(dir, name)).catch(() => null);
    if (!stats) continue;
    if (stats.isDirectory()) {
      const child = await open(at(dir, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW).catch(() => null);
      if (!child) continue;
      try {
        removed += await sweepDir(child, now);
      } finally {
        await child.close();
      }
      continue;
    }
    const match = SWEPT.exec(name);
    if (!match || !stats.isFile()) continue;
    const pid = match[2] ? Number(match[2]) : null;
    const orphan = pid !== null && pid !== process.pid && !alive(pid);
    if (orphan || now - stats.mtimeMs > STALE_MS) {
      await unlink(at(dir, name)).catch(() => undefined);
      removed += 1;
    }
  }
  return removed;
}
