// Open files and whole directory listings for long-lived sessions (the gateway's SFTP server), on the
// same rules as volume-files.ts: every name is reached through walk.ts from the volume's root, no
// symbolic link is ever followed (a link reads as absent and is never listed), and what is returned is
// a descriptor of the entry itself, so later reads and writes need no path at all.
import { constants, type Stats } from 'node:fs';
import { lstat, open, readdir, truncate, utimes, chmod, type FileHandle } from 'node:fs/promises';
import { isLayerTemporary } from './temporaries.js';
import { errnoOf, FileLayerError } from './errors.js';
import { parseVolumePath, type VolumePath } from './path.js';
import { adopt, at, openVolumeDir, type VolumeRoot } from './walk.js';
import type { VolumeHandleAccess } from '../../volume-access.js';
import type { OpenMode, Attributes } from '../../volume-access.js';
// The driver-facing interface owns these; re-exported for the file layer's own users.
export type { OpenMode, Attributes } from '../../volume-access.js';

const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_APPEND, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants;
/** Linux's O_PATH, which Node does not export. */
const O_PATH = 0o10000000;

export interface NamedStats {
  name: string;
  stats: Stats;
}

export class VolumeHandles implements VolumeHandleAccess {
  constructor(private readonly root: VolumeRoot) {}

  /** A regular file of the volume, opened; the caller closes it. A directory or anything else is refused. */
  async openFile(raw: string, mode: OpenMode): Promise<FileHandle> {
    const target = nonRoot(raw);
    return this.inParent(target, async (dir, name) => {
      let flags =
        (mode.write ? (mode.read ? O_RDWR : O_WRONLY) : O_RDONLY) | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK;
      if (mode.write && mode.append) flags |= O_APPEND;
      if (mode.write && mode.create) flags |= O_CREAT;
      if (mode.write && mode.create && mode.exclusive) flags |= O_EXCL;
      let file: FileHandle;
      try {
        // O_NONBLOCK: a FIFO left in the volume must not hang the session; fstat then refuses it.
        // O_TRUNC waits for fstat: a directory or device must not be truncated by the open itself.
        file = await open(at(dir, name), flags, (mode.createMode ?? 0o644) & 0o777);
      } catch (err) {
        const code = errnoOf(err);
        if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENXIO') throw absent(target.path);
        if (code === 'EISDIR') throw isDirectory(target.path);
        throw err;
      }
      try {
        const stats = await file.stat();
        if (stats.isDirectory()) throw isDirectory(target.path);
        if (!stats.isFile()) throw absent(target.path);
        if (mode.write && mode.create) await adopt(dir, file, stats);
        if (mode.write && mode.truncate) await file.truncate(0);
        return file;
      } catch (err) {
        await file.close();
        throw err;
      }
    });
  }

  /** Every file and directory in the directory (links and special files left out), with their stats. */
  async listAll(raw: string): Promise<NamedStats[]> {
    const target = parseVolumePath(raw);
    return this.inDir(target.parts, target.path, async (dir) => {
      const out: NamedStats[] = [];
      for (const name of await readdir(at(dir, '.'))) {
        if (isLayerTemporary(name)) continue;
        const stats = await lstat(at(dir, name)).catch(() => null); // removed while listing: left out
        if (stats && (stats.isFile() || stats.isDirectory())) out.push({ name, stats });
      }
      return out;
    });
  }

  /** The entry's stats, never following a link (a link, or anything but a file or directory, is absent). */
  async stat(raw: string): Promise<Stats> {
    const target = parseVolumePath(raw);
    if (target.parts.length === 0) return this.inDir([], '/', (dir) => dir.stat());
    return this.inParent(target, async (dir, name) => {
      let stats: Stats;
      try {
        stats = await lstat(at(dir, name));
      } catch (err) {
        if (errnoOf(err) === 'ENOENT') throw absent(target.path);
        throw err;
      }
      if (!stats.isFile() && !stats.isDirectory()) throw absent(target.path);
      return stats;
    });
  }

  /**
   * Sets mode bits (no set-id or sticky bits), size and times on a file or directory. An O_PATH
   * descriptor pins the entry (a link is refused by O_NOFOLLOW before anything changes), and the
   * changes go through its /proc link, which names that inode and nothing a link points at.
   */
  async setAttributes(raw: string, attrs: Attributes): Promise<void> {
    const target = parseVolumePath(raw);
    const apply = async (dir: FileHandle, name: string) => {
      let handle: FileHandle;
      try {
        handle = await open(at(dir, name), O_PATH | O_NOFOLLOW);
      } catch (err) {
        if (errnoOf(err) === 'ENOENT') throw absent(target.path);
        throw err;
      }
      try {
        const stats = await handle.stat();
        if (!stats.isFile() && !stats.isDirectory()) throw absent(target.path);
        const self = `/proc/self/fd/${handle.fd}`;
        if (attrs.size !== undefined) {
          if (!stats.isFile()) throw isDirectory(target.path);
          await truncate(self, attrs.size);
        }
        if (attrs.mode !== undefined) await chmod(self, attrs.mode & 0o777);
        if (attrs.atime !== undefined || attrs.mtime !== undefined) {
          await utimes(self, attrs.atime ?? stats.atime, attrs.mtime ?? stats.mtime);
        }
      } finally {
        await handle.close();
      }
    };
    if (target.parts.length === 0) return this.inDir([], '/', (dir) => apply(dir, '.'));
    return this.inParent(target, apply);
  }

  private async inDir<T>(
    parts: readonly string[],
    shown: string,
    use: (dir: FileHandle) => Promise<T>,
  ): Promise<T> {
    try {
      const opened = await openVolumeDir(this.root, parts, shown);
      try {
        return await use(opened.dir);
      } finally {
        await opened.close();
      }
    } catch (err) {
      if (!(err instanceof FileLayerError) && errnoOf(err) === 'ENOENT') throw absent(shown);
      throw err;
    }
  }

  private inParent<T>(target: VolumePath, use: (dir: FileHandle, name: string) => Promise<T>): Promise<T> {
    return this.inDir(target.parts.slice(0, -1), target.path, (dir) => use(dir, target.parts.at(-1)!));
  }
}

function nonRoot(raw: string): VolumePath {
  const target = parseVolumePath(raw);
  if (target.parts.length === 0) throw isDirectory(target.path);
  return target;
}

function absent(path: string): FileLayerError {
  return new FileLayerError('not-found', `${path} does not exist.`);
}

function isDirectory(path: string): FileLayerError {
  return new FileLayerError('is-a-directory', `${path} is a directory.`);
}
