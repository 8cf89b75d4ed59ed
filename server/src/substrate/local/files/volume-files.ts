// Every operation on a customer's volume (DECISIONS.md §6 "Files"): list, stat, read, write, mkdir,
// delete, rename and chmod, each reaching the volume's files only through walk.ts, so no path and no
// symbolic link leads outside it (Wings' CVE-2023-25152, CVE-2023-25168, CVE-2024-27102,
// GHSA-rhq6-9rgh-v45c and its recursive delete are regression tests in test/files/layer). Symbolic links
// inside the volume are never followed: they are not listed, read as absent, replaced (not written
// through) by a write, and removed themselves by a delete.
import { randomBytes } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { constants, type Stats } from 'node:fs';
import { chmod, lstat, open, readdir, rename, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import { isLayerTemporary } from './temporaries.js';
import { errnoOf, FileLayerError } from './errors.js';
import { parseVolumePath, type VolumePath } from './path.js';
import { VolumeHandles } from './handles.js';
import { VolumeStreams } from './streams.js';
import { adopt, at, openVolumeDir, type VolumeRoot } from './walk.js';
import type { VolumeFileAccess } from '../../volume-access.js';
import type { FileEntry, Listing, FileContent } from '../../volume-access.js';
// The driver-facing interface owns these; re-exported for the file layer's own users.
export type { FileEntry, Listing, FileContent } from '../../volume-access.js';

// libuv opens every descriptor close-on-exec already.
const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY, O_DIRECTORY } = constants;
/** Linux's O_PATH, which Node does not export. */
const O_PATH = 0o10000000;

/** Reads and writes through the API: one mebibyte each (seed §8). */
export const MAX_FILE_BYTES = 1024 * 1024;
/** A listing stops here and says `truncated`. */
export const MAX_LIST_ENTRIES = 1000;

export class VolumeFiles implements VolumeFileAccess {
  /** Reads and writes of any size, for transfers (streams.ts). */
  readonly streams: VolumeStreams;

  /** `root`: the volume's directory on this machine, which the platform made and no customer controls. */
  constructor(private readonly root: VolumeRoot) {
    this.streams = new VolumeStreams(root);
  }

  /** Open files and whole listings, for sessions that hold them (SFTP): handles.ts. */
  handles(): VolumeHandles {
    return new VolumeHandles(this.root);
  }

  async list(raw: string): Promise<Listing> {
    const target = parseVolumePath(raw);
    return this.inDir(target.parts, target.path, async (dir) => {
      const entries: FileEntry[] = [];
      let truncated = false;
      for (const name of await readdir(at(dir, '.'))) {
        if (isLayerTemporary(name)) continue;
        let stats: Stats;
        try {
          stats = await lstat(at(dir, name));
        } catch (err) {
          if (errnoOf(err) === 'ENOENT') continue; // removed while listing
          throw err;
        }
        const entry = toEntry(join(target.path, name), name, stats);
        if (!entry) continue;
        if (entries.length === MAX_LIST_ENTRIES) {
          truncated = true;
          break;
        }
        entries.push(entry);
      }
      return { path: target.path, entries, truncated };
    });
  }

  async stat(raw: string): Promise<FileEntry> {
    const target = parseVolumePath(raw);
    if (target.parts.length === 0) return this.inDir([], '/', async (dir) => rootEntry(await dir.stat()));
    return this.inParent(target, async (dir, name) => {
      const entry = toEntry(target.path, name, await lstatOrAbsent(dir, name, target.path));
      if (!entry) throw absent(target.path);
      return entry;
    });
  }

  async read(raw: string): Promise<FileContent> {
    const target = parseVolumePath(raw);
    if (target.parts.length === 0) throw isDirectory(target.path);
    return this.inParent(target, async (dir, name) => {
      // O_NONBLOCK: a FIFO left in the volume must not hang the reader; fstat then refuses it.
      const file = await openFile(dir, name, target.path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
      try {
        const stats = await file.stat();
        if (stats.isDirectory()) throw isDirectory(target.path);
        if (!stats.isFile()) throw absent(target.path);
        if (stats.size > MAX_FILE_BYTES) throw tooLarge(target.path);
        // The file may grow after fstat: read on until its end, never keeping more than the cap.
        const chunks: Buffer[] = [];
        let length = 0;
        let buffer = Buffer.allocUnsafe(stats.size + 1);
        let filled = 0;
        for (;;) {
          const asked = buffer.length - filled;
          const { bytesRead } = await file.read(buffer, filled, asked, null);
          if (bytesRead === 0) break;
          filled += bytesRead;
          length += bytesRead;
          if (length > MAX_FILE_BYTES) throw tooLarge(target.path);
          // A regular file reads short only at its end: no trip to the pool to be told so again.
          if (bytesRead < asked) break;
          if (filled === buffer.length) {
            chunks.push(buffer);
            buffer = Buffer.allocUnsafe(Math.min(64 * 1024, MAX_FILE_BYTES + 1 - length));
            filled = 0;
          }
        }
        chunks.push(buffer.subarray(0, filled));
        const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
        if (!isUtf8(bytes)) {
          throw new FileLayerError('file-not-text', `${target.path} is not UTF-8 text.`);
        }
        return { path: target.path, content: bytes.toString('utf8'), size_bytes: length };
      } finally {
        await file.close();
      }
    });
  }

  /** Replaces or creates the file atomically (a temporary file in its directory, then rename). */
  async write(
    raw: string,
    content: string | Buffer,
    options: { maxBytes?: number } = {},
  ): Promise<FileEntry> {
    const target = parseVolumePath(raw);
    if (target.parts.length === 0) throw isDirectory(target.path);
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    if (bytes.length > (options.maxBytes ?? MAX_FILE_BYTES)) throw tooLarge(target.path);
    return this.inParent(
      target,
      async (dir, name) => {
        const temp = `.svc-write-${randomBytes(8).toString('hex')}.tmp`;
        const file = await open(at(dir, temp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644);
        let stats: Stats;
        try {
          await adopt(dir, file);
          await file.writeFile(bytes);
          // A replaced file keeps its mode; lstat never follows, so only a real file lends one.
          const previous = await lstat(at(dir, name)).catch(() => null);
          if (previous?.isFile()) await file.chmod(previous.mode & 0o777);
          await file.sync();
          stats = await file.stat();
        } catch (err) {
          await file.close();
          await unlink(at(dir, temp)).catch(() => undefined);
          throw err;
        }
        await file.close();
        try {
          // rename never follows its target: a symbolic link there is replaced, not written through.
          await rename(at(dir, temp), at(dir, name));
        } catch (err) {
          await unlink(at(dir, temp)).catch(() => undefined);
          if (errnoOf(err) === 'EISDIR' || errnoOf(err) === 'ENOTEMPTY') throw isDirectory(target.path);
          throw err;
        }
        return toEntry(target.path, name, stats)!;
      },
      { create: true },
    );
  }

  /** Makes the directory and any missing parents; an existing directory is fine. */
  async mkdir(raw: string): Promise<FileEntry> {
    const target = parseVolumePath(raw);
    return this.inDir(
      target.parts,
      target.path,
      async (dir) =>
        target.parts.length === 0
          ? rootEntry(await dir.stat())
          : toEntry(target.path, target.parts.at(-1)!, await dir.stat())!,
      { create: true },
    );
  }

  /** Deletes a file, a link (the link itself) or a directory; a non-empty one only when `recursive`. */
  async remove(raw: string, options: { recursive?: boolean } = {}): Promise<void> {
    const target = parseVolumePath(raw);
    if (target.parts.length === 0) throw mountRoot();
    await this.inParent(target, async (dir, name) => {
      const stats = await lstatOrAbsent(dir, name, target.path);
      if (!stats.isDirectory()) return unlinkEntry(dir, name, target.path, options.recursive ?? false);
      if (options.recursive) return removeTree(dir, name);
      try {
        await rmdir(at(dir, name));
      } catch (err) {
        const code = errnoOf(err);
        if (code === 'ENOTEMPTY' || code === 'EEXIST') {
          throw new FileLayerError(
            'directory-not-empty',
            `${target.path} is not empty; delete it with recursive.`,
          );
        }
        // Swapped for a link or file since lstat: remove that instead, never anything it points at.
        if (code === 'ENOTDIR') return unlinkEntry(dir, name, target.path, false);
        if (code === 'ENOENT') throw absent(target.path);
        throw err;
      }
    });
  }

  /** Moves an entry within the volume (a link moves as a link). */
  async rename(rawFrom: string, rawTo: string): Promise<void> {
    const from = parseVolumePath(rawFrom);
    const to = parseVolumePath(rawTo);
    if (from.parts.length === 0 || to.parts.length === 0) throw mountRoot();
    return this.inParent(from, (fromDir, fromName) =>
      this.inParent(to, async (toDir, toName) => {
        try {
          await rename(at(fromDir, fromName), at(toDir, toName));
        } catch (err) {
          const code = errnoOf(err);
          if (code === 'ENOENT') throw absent(from.path);
          if (code === 'EISDIR' || code === 'ENOTEMPTY' || code === 'EEXIST') throw isDirectory(to.path);
          if (code === 'ENOTDIR')
            throw new FileLayerError('not-a-directory', `${to.path} is not a directory.`);
          if (code === 'EINVAL')
            throw new FileLayerError('invalid-path', `${from.path} cannot move into itself.`);
          throw err;
        }
      }),
    );
  }

  /** Sets permission bits (no set-id or sticky bits) on a file or directory; a link is not followed. */
  async chmod(raw: string, mode: number): Promise<void> {
    const target = parseVolumePath(raw);
    if (target.parts.length === 0) return this.inDir([], '/', (dir) => dir.chmod(mode & 0o777));
    await this.inParent(target, async (dir, name) => {
      // An O_PATH descriptor pins the entry without needing to read it (a mode-000 file can still be
      // re-moded); changing the mode through its /proc link acts on that inode, and a link itself is
      // refused before, so nothing a link points at is ever changed (glibc's fchmodat does the same).
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
        await chmod(`/proc/self/fd/${handle.fd}`, mode & 0o777);
      } finally {
        await handle.close();
      }
    });
  }

  private async inDir<T>(
    parts: readonly string[],
    shown: string,
    use: (dir: FileHandle) => Promise<T>,
    options: { create?: boolean } = {},
  ): Promise<T> {
    try {
      const opened = await openVolumeDir(this.root, parts, shown, options);
      try {
        return await use(opened.dir);
      } finally {
        await opened.close();
      }
    } catch (err) {
      // The directory held open was removed meanwhile (the workload, another request): what was asked
      // for no longer exists.
      if (!(err instanceof FileLayerError) && errnoOf(err) === 'ENOENT') throw absent(shown);
      throw err;
    }
  }

  private inParent<T>(
    target: VolumePath,
    use: (dir: FileHandle, name: string) => Promise<T>,
    options: { create?: boolean } = {},
  ): Promise<T> {
    const name = target.parts.at(-1)!;
    return this.inDir(target.parts.slice(0, -1), target.path, (dir) => use(dir, name), options);
  }
}

/** Opens a non-directory or directory entry without following a link (a link reads as absent). */
async function openFile(dir: FileHandle, name: string, shown: string, flags: number): Promise<FileHandle> {
  try {
    return await open(at(dir, name), flags | O_NOFOLLOW);
  } catch (err) {
    const code = errnoOf(err);
    if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENXIO') throw absent(shown);
    throw err;
  }
}

async function lstatOrAbsent(dir: FileHandle, name: string, shown: string): Promise<Stats> {
  try {
    return await lstat(at(dir, name));
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') throw absent(shown);
    throw err;
  }
}

async function unlinkEntry(dir: FileHandle, name: string, shown: string, recursive: boolean): Promise<void> {
  try {
    await unlink(at(dir, name));
  } catch (err) {
    const code = errnoOf(err);
    if (code === 'ENOENT') throw absent(shown);
    // A directory swapped in since lstat: a recursive delete takes it too, a plain one refuses.
    if (code === 'EISDIR' || code === 'EPERM') {
      if (recursive) return removeTree(dir, name);
      throw new FileLayerError(
        'directory-not-empty',
        `${shown} is a directory now; delete it with recursive.`,
      );
    }
    throw err;
  }
}

/**
 * Removes the directory `name` in `parent` and all it holds, descending only through descriptors opened
 * with O_NOFOLLOW: a directory swapped for a link while this runs is unlinked as a link, and what the
 * link points at is never touched (Wings' recursive delete followed it).
 */
async function removeTree(parent: FileHandle, name: string): Promise<void> {
  let dir: FileHandle;
  try {
    dir = await open(at(parent, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (err) {
    const code = errnoOf(err);
    if (code === 'ENOENT') return;
    if (code === 'ELOOP' || code === 'ENOTDIR') return unlinkQuietly(parent, name);
    throw err;
  }
  try {
    for (let attempt = 0; ; attempt++) {
      for (const child of await readdir(at(dir, '.'))) {
        const stats = await lstat(at(dir, child)).catch(() => null);
        if (stats?.isDirectory()) await removeTree(dir, child);
        else if (stats) await unlinkOrDescend(dir, child);
      }
      try {
        await rmdir(at(parent, name));
        return;
      } catch (err) {
        const code = errnoOf(err);
        if (code === 'ENOENT') return;
        // Filled again while it was emptied (the workload still runs): go round, a few times.
        if (code === 'ENOTEMPTY' || code === 'EEXIST') {
          if (attempt < 5) continue;
          throw new FileLayerError(
            'directory-not-empty',
            'A directory kept being filled while it was deleted.',
          );
        }
        // Swapped for a link or file after it was opened: the name is removed, the link not followed.
        if (code === 'ENOTDIR') return unlinkQuietly(parent, name);
        throw err;
      }
    }
  } finally {
    await dir.close();
  }
}

async function unlinkOrDescend(dir: FileHandle, name: string): Promise<void> {
  try {
    await unlink(at(dir, name));
  } catch (err) {
    const code = errnoOf(err);
    if (code === 'ENOENT') return;
    if (code === 'EISDIR' || code === 'EPERM') return removeTree(dir, name);
    throw err;
  }
}

async function unlinkQuietly(dir: FileHandle, name: string): Promise<void> {
  await unlinkOrDescend(dir, name);
}

function toEntry(path: string, name: string, stats: Stats): FileEntry | null {
  if (stats.isDirectory()) {
    return { kind: 'directory', name, path, modified_at: stats.mtime.toISOString(), size_bytes: null };
  }
  if (stats.isFile()) {
    return { kind: 'file', name, path, modified_at: stats.mtime.toISOString(), size_bytes: stats.size };
  }
  return null;
}

function rootEntry(stats: Stats): FileEntry {
  return { kind: 'directory', name: '', path: '/', modified_at: stats.mtime.toISOString(), size_bytes: null };
}

function join(dir: string, name: string): string {
  return dir === '/' ? `/${name}` : `${dir}/${name}`;
}

function absent(path: string): FileLayerError {
  return new FileLayerError('not-found', `${path} does not exist.`);
}

function isDirectory(path: string): FileLayerError {
  return new FileLayerError('is-a-directory', `${path} is a directory.`);
}

function tooLarge(path: string): FileLayerError {
  return new FileLayerError('file-too-large', `${path} is larger than ${MAX_FILE_BYTES} bytes.`);
}

function mountRoot(): FileLayerError {
  return new FileLayerError('mount-root', 'The root of the volume cannot be deleted or moved.');
}
