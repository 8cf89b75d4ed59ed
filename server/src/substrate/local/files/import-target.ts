// What an import writes into a volume (DECISIONS.md §6 "Imports"), through the same confined walk as every
// other file operation (walk.ts): files of any size streamed into a temporary file beside their name and
// renamed over it with the remote's modification time, so a file is either absent, as it was, or whole;
// a size-and-time look at what is there (a resumed import skips what is complete); the volume's tree for
// `delete_extraneous`. No path is resolved through a symbolic link: a link in the way reads as absent and
// is replaced, never written through.
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import { errnoOf, FileLayerError } from './errors.js';
import { parseVolumePath } from './path.js';
import { VolumeFiles } from './volume-files.js';
import { adopt, at, openDir, openRoot, type VolumeRoot } from './walk.js';
import type { VolumeImportAccess } from '../../volume-access.js';
import type { LocalFileInfo, IncomingFile, VolumeTreeEntry } from '../../volume-access.js';
// The driver-facing interface owns these; re-exported for the file layer's own users.
export type { LocalFileInfo, IncomingFile, VolumeTreeEntry } from '../../volume-access.js';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_RDONLY, O_DIRECTORY } = constants;
/** Temporary files of an import; a delete_extraneous pass never counts them as the customer's. */
export const IMPORT_TEMP_PREFIX = '.svc-import-';

export class VolumeImportTarget implements VolumeImportAccess {
  private readonly files: VolumeFiles;

  constructor(private readonly root: VolumeRoot) {
    this.files = new VolumeFiles(root);
  }

  /** The regular file at `path`: its size and time; null when absent or anything else (a link, a directory). */
  async fileInfo(raw: string): Promise<LocalFileInfo | null> {
    const target = parseVolumePath(raw);
    if (target.parts.length === 0) return null;
    const root = await openRoot(this.root);
    try {
      const dir = await openDir(root, target.parts.slice(0, -1), target.path).catch((err: unknown) => {
        if (err instanceof FileLayerError) return null;
        throw err;
      });
      if (!dir) return null;
      try {
        const stats = await lstat(at(dir, target.parts.at(-1)!)).catch(() => null);
        return stats?.isFile() ? { size: stats.size, mtimeSec: Math.floor(stats.mtimeMs / 1000) } : null;
      } finally {
        await dir.close();
      }
    } finally {
      await root.close();
    }
  }

  async mkdir(raw: string): Promise<void> {
    await this.files.mkdir(raw);
  }

  /** Deletes a file, link or directory (with what it holds); absent is fine. */
  async remove(raw: string): Promise<void> {
    try {
      await this.files.remove(raw, { recursive: true });
    } catch (err) {
      if (!(err instanceof FileLayerError && err.code === 'not-found')) throw err;
    }
  }

  /** A temporary file beside `path` (its parents made); commit renames it over `path`. */
  async create(raw: string): Promise<IncomingFile> {
    const target = parseVolumePath(raw);
    if (target.parts.length === 0) throw new FileLayerError('is-a-directory', '/ is a directory.');
    const name = target.parts.at(-1)!;
    const root = await openRoot(this.root);
    let dir: FileHandle;
    try {
      dir = await openDir(root, target.parts.slice(0, -1), target.path, { create: true });
    } finally {
      await root.close();
    }
    const temp = `${IMPORT_TEMP_PREFIX}${randomBytes(8).toString('hex')}.tmp`;
    let file: FileHandle;
    try {
      file = await open(at(dir, temp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644);
    } catch (err) {
      await dir.close();
      throw err;
    }
    try {
      await adopt(dir, file);
    } catch (err) {
      await file.close();
      await unlink(at(dir, temp)).catch(() => undefined);
      await dir.close();
      throw err;
    }
    let open_ = true;
    const release = async () => {
      if (!open_) return;
      open_ = false;
      await file.close().catch(() => undefined);
    };
    return {
      async write(bytes, position) {
        let done = 0;
        while (done < bytes.length) {
          const { bytesWritten } = await file.write(bytes, done, bytes.length - done, position + done);
          done += bytesWritten;
        }
      },
      async commit(mtimeSec) {
        try {
          await file.utimes(mtimeSec, mtimeSec);
          await release();
          // rename never follows its target: a link there is replaced, not written through.
          await rename(at(dir, temp), at(dir, name));
        } catch (err) {
          await unlink(at(dir, temp)).catch(() => undefined);
          if (errnoOf(err) === 'EISDIR' || errnoOf(err) === 'ENOTEMPTY') {
            throw new FileLayerError('is-a-directory', `${target.path} is a directory in the volume.`);
          }
          throw err;
        } finally {
          await dir.close();
        }
      },
      async abort() {
        await release();
        await unlink(at(dir, temp)).catch(() => undefined);
        await dir.close().catch(() => undefined);
      },
    };
  }

  /** Removes the temporary files an import killed mid-copy left (a resumed import starts with this). */
  async removeLeftovers(): Promise<number> {
    let removed = 0;
    for (const entry of await this.tree()) {
      if (
        entry.kind === 'file' &&
        entry.path.slice(entry.path.lastIndexOf('/') + 1).startsWith(IMPORT_TEMP_PREFIX)
      ) {
        await this.remove(entry.path);
        removed += 1;
      }
    }
    return removed;
  }

  /**
   * Every entry of the volume below the root, a directory after what it holds (so deleting in this
   * order empties directories first). Descends only through descriptors opened with O_NOFOLLOW.
   */
  async tree(): Promise<VolumeTreeEntry[]> {
    const out: VolumeTreeEntry[] = [];
    const root = await openRoot(this.root);
    try {
      await walkTree(root, '', out);
    } finally {
      await root.close();
    }
    return out;
  }
}

async function walkTree(dir: FileHandle, prefix: string, out: VolumeTreeEntry[]): Promise<void> {
  for (const name of await readdir(at(dir, '.'))) {
    const path = `${prefix}/${name}`;
    const stats = await lstat(at(dir, name)).catch(() => null);
    if (!stats) continue;
    if (stats.isDirectory()) {
      let child: FileHandle;
      try {
        child = await open(at(dir, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      } catch {
        continue; // swapped for something else meanwhile
      }
      try {
        await walkTree(child, path, out);
      } finally {
        await child.close();
      }
      out.push({ path, kind: 'directory' });
    } else {
      out.push({ path, kind: stats.isFile() ? 'file' : 'other' });
    }
  }
}
