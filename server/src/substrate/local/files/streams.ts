// Streaming access to a volume's files, for transfers of any size (gateway downloads and file sessions,
// SFTP, imports): a file opened for reading, and a new file written at any offsets then put in place by a
// rename. Both reach the file only through walk.ts (directory descriptors, O_NOFOLLOW on every component),
// as every operation of volume-files.ts does, so neither can leave the volume or follow a link.
import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { lstat, open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import { errnoOf, FileLayerError } from './errors.js';
import { parseVolumePath, type VolumePath } from './path.js';
import { sweepTemporaries, uploadTemporaryName } from './temporaries.js';
import { adopt, at, openDir, openRoot, openVolumeDir, type VolumeRoot } from './walk.js';
import type { FileEntry } from './volume-files.js';
import type { VolumeStreamAccess } from '../../volume-access.js';
import type { OpenedVolumeFile, PendingVolumeFile } from '../../volume-access.js';

const { O_RDONLY, O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY, O_DIRECTORY } = constants;

/** Temporary files of uploads start with this; listings hide them (temporaries.ts). */
export const TEMP_PREFIX = '.svc-upload-';

/** A regular file of the volume, open for reading, with its descriptor; the caller closes it. */
export interface OpenedFile extends OpenedVolumeFile {
  readonly handle: FileHandle;
}

/**
 * A new file being written next to `path` (a temporary name in the same directory, held open by
 * descriptor). `commit` renames it over `path` atomically; `discard` removes it. Exactly one of them
 * must be called.
 */
export interface PendingFile extends PendingVolumeFile {
  readonly handle: FileHandle;
}

export class VolumeStreams implements VolumeStreamAccess {
  /** `root`: the volume's directory on this machine (see VolumeFiles). */
  constructor(private readonly root: VolumeRoot) {}

  /** Opens the regular file at `raw`; a directory is `is-a-directory`, a link or special file absent. */
  async openRead(raw: string): Promise<OpenedFile> {
    const target = parseVolumePath(raw);
    if (target.parts.length === 0) throw new FileLayerError('is-a-directory', '/ is a directory.');
    const handle = await this.inParent(target, async (dir, name) => {
      try {
        // O_NONBLOCK: a FIFO must not hang the opener; fstat refuses it below.
        return await open(at(dir, name), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
      } catch (err) {
        const code = errnoOf(err);
        if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENXIO') throw absent(target.path);
        throw err;
      }
    });
    let stats: Stats;
    try {
      stats = await handle.stat();
      if (stats.isDirectory()) throw new FileLayerError('is-a-directory', `${target.path} is a directory.`);
      if (!stats.isFile()) throw absent(target.path);
    } catch (err) {
      await handle.close();
      throw err;
    }
    return {
      handle,
      entry: fileEntry(target, stats),
      readAt: async (buffer, position, length = buffer.length) =>
        (await handle.read(buffer, 0, length, position)).bytesRead,
      close: () => handle.close(),
    };
  }

  /** Starts a file that will replace (or create) `raw`; its directory must exist. */
  async createPending(raw: string): Promise<PendingFile> {
    const target = parseVolumePath(raw);
    if (target.parts.length === 0) throw new FileLayerError('is-a-directory', '/ is a directory.');
    const name = target.parts.at(-1)!;
    const root = await openRoot(this.root);
    let dir: FileHandle;
    try {
      dir = await openDir(root, target.parts.slice(0, -1), target.path);
    } catch (err) {
      if (!(err instanceof FileLayerError) && errnoOf(err) === 'ENOENT') throw absent(target.path);
      throw err;
    } finally {
      await root.close();
    }
    const temp = uploadTemporaryName(randomBytes(8).toString('hex'));
    let handle: FileHandle;
    let previous: Stats | null;
    try {
      previous = await lstat(at(dir, name)).catch(() => null);
      if (previous?.isDirectory())
        throw new FileLayerError('is-a-directory', `${target.path} is a directory.`);
      handle = await open(at(dir, temp), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644);
    } catch (err) {
      await dir.close();
      throw err;
    }
    try {
      await adopt(dir, handle);
    } catch (err) {
      await handle.close();
      await unlink(at(dir, temp)).catch(() => undefined);
      await dir.close();
      throw err;
    }
    let settled = false;
    const settle = async (work: () => Promise<FileEntry | void>) => {
      if (settled) throw new Error('the pending file was already committed or discarded');
      settled = true;
      try {
        return await work();
      } finally {
        await dir.close();
      }
    };
    const removeTemp = () => unlink(at(dir, temp)).catch(() => undefined);
    const behind = new WriteBehind(handle);
    return {
      handle,
      path: target.path,
      replacedBytes: previous?.isFile() ? previous.size : 0,
      writeAt: async (data, position) => {
        // A body's chunks go down in one gathered write rather than copied into one buffer first.
        let buffers = Buffer.isBuffer(data) ? [data] : [...data];
        let written = 0;
        while (buffers.length > 0) {
          const { bytesWritten } = await handle.writev(buffers, position + written);
          written += bytesWritten;
          buffers = unwritten(buffers, bytesWritten);
        }
        behind.wrote(written);
      },
      commit: async () =>
        (await settle(async () => {
          let stats: Stats;
          try {
            // A replaced file keeps its mode; lstat never follows, so only a real file lends one.
            const before = await lstat(at(dir, name)).catch(() => null);
            if (before?.isFile()) await handle.chmod(before.mode & 0o777);
            await behind.settled();
            await handle.sync();
            stats = await handle.stat();
          } catch (err) {
            await handle.close();
            await removeTemp();
            throw err;
          }
          await handle.close();
          try {
            // rename never follows its target: a link there is replaced, not written through.
            await rename(at(dir, temp), at(dir, name));
          } catch (err) {
            await removeTemp();
            const code = errnoOf(err);
            if (code === 'EISDIR' || code === 'ENOTEMPTY')
              throw new FileLayerError('is-a-directory', `${target.path} is a directory.`);
            if (code === 'ENOENT') throw absent(target.path);
            throw err;
          }
          return fileEntry(target, stats);
        })) as FileEntry,
      discard: async () => {
        await settle(async () => {
          await behind.settled().catch(() => undefined);
          await handle.close().catch(() => undefined);
          await removeTemp();
        });
      },
    };
  }

  /** Removes what killed uploads left (temporaries.ts); answers how many went. */
  sweepTemporaries(): Promise<number> {
    return sweepTemporaries(this.root);
  }

  /**
   * Bytes held by the volume's regular files (apparent sizes), walked through descriptors without
   * following links: what an upload's room within the volume's size is measured against.
   */
  async usedBytes(): Promise<number> {
    const root = await openRoot(this.root);
    try {
      return await sizeOf(root);
    } finally {
      await root.close();
    }
  }

  private async inParent<T>(
    target: VolumePath,
    use: (dir: FileHandle, name: string) => Promise<T>,
  ): Promise<T> {
    try {
      const opened = await openVolumeDir(this.root, target.parts.slice(0, -1), target.path);
      try {
        return await use(opened.dir, target.parts.at(-1)!);
      } finally {
        await opened.close();
      }
    } catch (err) {
      if (!(err instanceof FileLayerError) && errnoOf(err) === 'ENOENT') throw absent(target.path);
      throw err;
    }
  }
}

/** Written since the last flush before the file's disk writes are started (see WriteBehind). */
const WRITE_BEHIND_BYTES = 8 * 1024 * 1024;

/**
 * Starts an upload's disk writes while it is still arriving: a datasync in the background each
 * WRITE_BEHIND_BYTES, one at a time, never waited for by a write. Without it every byte reached the disk
 * in commit's sync, after the last one had arrived (a third of an upload's time in the profile). The
 * commit still syncs the whole file; a failed flush fails the commit, since the kernel reports a
 * writeback error to one sync of a descriptor only.
 */
class WriteBehind {
  private unflushed = 0;
  private flushing: Promise<void> | null = null;
  private failure: { err: unknown } | null = null;

  constructor(private readonly handle: FileHandle) {}

  wrote(bytes: number): void {
    this.unflushed += bytes;
    if (this.flushing || this.unflushed < WRITE_BEHIND_BYTES) return;
    this.unflushed = 0;
    this.flushing = this.handle.datasync().then(
      () => void (this.flushing = null),
      (err: unknown) => {
        this.failure ??= { err };
        this.flushing = null;
      },
    );
  }

  /** Once no flush runs; a flush's failure, if one failed. */
  async settled(): Promise<void> {
    await this.flushing;
    if (this.failure) throw this.failure.err;
  }
}

/** What a short write left of `buffers`. */
export function unwritten(buffers: Buffer[], bytes: number): Buffer[] {
  let skip = bytes;
  let index = 0;
  while (index < buffers.length && skip >= buffers[index]!.length) skip -= buffers[index++]!.length;
  const rest = buffers.slice(index);
  if (skip > 0) rest[0] = rest[0]!.subarray(skip);
  return rest;
}

async function sizeOf(dir: FileHandle): Promise<number> {
  let total = 0;
  let names: string[];
  try {
    names = await readdir(at(dir, '.'));
  } catch {
    return 0;
  }
  for (const name of names) {
    const stats = await lstat(at(dir, name)).catch(() => null);
    if (stats?.isFile()) total += stats.size;
    else if (stats?.isDirectory()) {
      const child = await open(at(dir, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW).catch(() => null);
      if (!child) continue;
      try {
        total += await sizeOf(child);
      } finally {
        await child.close();
      }
    }
  }
  return total;
}

function fileEntry(target: VolumePath, stats: Stats): FileEntry {
  return {
    kind: 'file',
    name: target.parts.at(-1) ?? '',
    path: target.path,
    modified_at: stats.mtime.toISOString(),
    size_bytes: stats.size,
  };
}

function absent(path: string): FileLayerError {
  return new FileLayerError('not-found', `${path} does not exist.`);
}
