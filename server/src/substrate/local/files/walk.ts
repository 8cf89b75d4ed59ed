// Resolution that cannot leave the volume. Every step is relative to an open directory descriptor: a
// name inside directory descriptor N is reached as /proc/self/fd/N/name, which the kernel resolves from
// the directory N refers to (the magic link is the descriptor itself, not a path read again), so it is
// openat(2) in all but name. Each component is opened with O_NOFOLLOW | O_DIRECTORY: a symbolic link is
// never followed, whatever it points at, and a link swapped in after any earlier step is met by the
// open itself, not by a check before it; there is no check-then-use window. `..` never reaches here
// (path.ts refuses it), so a walk only goes down from the volume's root.
//
// A walk costs a trip to libuv's thread pool per component, each way (open, then close): a stat three
// directories deep was nine trips, and the trips were nearly all of its time (the profile of
// scripts/bench/files.ts: the process 81 % idle, waiting on them). openVolumeDir first opens the
// directory by its whole path in one call, which may follow links, and keeps it only when the kernel's
// own name for that descriptor (the target of /proc/self/fd/N, resolved from the inode the descriptor
// holds, not from the path given) is exactly the root's followed by the path asked for: then that
// directory is, at that moment, where a walk would have arrived without meeting a link, and everything
// after uses the descriptor, as after a walk. Anything else (a link on the way, a missing component, a
// root or directory renamed meanwhile) falls back to the walk, which answers as it always did. Only
// directories are opened this way (O_DIRECTORY refuses anything else before it is opened, so no device
// or FIFO is ever opened through a link), and nothing is read, made or changed before the check.
import { constants } from 'node:fs';
import type { Stats } from 'node:fs';
import { lchown, lstat, mkdir, open, readlink, type FileHandle } from 'node:fs/promises';
import { errnoOf, FileLayerError } from './errors.js';

// libuv opens every descriptor close-on-exec already.
const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

/** The name `name` inside the directory open as `dir`, for a call that must not resolve it by path. */
export function at(dir: FileHandle, name: string): string {
  return `/proc/self/fd/${dir.fd}/${name}`;
}

/**
 * A volume whose directory is looked up when it is used (a cluster's member keeps it), and whose files
 * belong to the owner of its root directory (an unprivileged container's root, mapped to an id of this
 * machine), not to this process: what the layer makes there is given to that owner, so the unit's
 * programs may change it.
 */
export interface OwnedVolumeRoot {
  resolve(): Promise<string>;
}

/** A volume's directory on this machine, or one found when used. */
export type VolumeRoot = string | OwnedVolumeRoot;

interface Owner {
  uid: number;
  gid: number;
}
/** The owner of what is made below an open directory of an OwnedVolumeRoot. */
const owners = new WeakMap<FileHandle, Owner>();

/** The volume's root directory, opened; the caller closes it. */
export async function openRoot(root: VolumeRoot): Promise<FileHandle> {
  return openRootAt(root, typeof root === 'string' ? root : await root.resolve());
}

/** `root`, already resolved to `path`, opened. */
async function openRootAt(root: VolumeRoot, path: string): Promise<FileHandle> {
  if (typeof root === 'string') return open(path, DIR_FLAGS);
  const handle = await open(path, DIR_FLAGS);
  try {
    const { uid, gid } = await handle.stat();
    owners.set(handle, { uid, gid });
  } catch (err) {
    await handle.close();
    throw err;
  }
  return handle;
}

/**
 * Gives a file this process just made in `dir` (open as `made`, or named `name` there) to the volume's
 * owner, where its root says it has one; a file someone else owns is left as it is.
 */
export async function adopt(dir: FileHandle, made: FileHandle | string, stats?: Stats): Promise<void> {
  const owner = owners.get(dir);
  if (!owner) return;
  const current = stats ?? (typeof made === 'string' ? await lstat(at(dir, made)) : await made.stat());
  if (current.uid !== process.geteuid?.() || (current.uid === owner.uid && current.gid === owner.gid)) return;
  if (typeof made === 'string') await lchown(at(dir, made), owner.uid, owner.gid);
  else await made.chown(owner.uid, owner.gid);
}

function inherit(from: FileHandle, to: FileHandle): FileHandle {
  const owner = owners.get(from);
  if (owner) owners.set(to, owner);
  return to;
}

/**
 * The directory at `parts` below `root` (a handle the caller owns and closes). A missing component, a
 * file or a symbolic link on the way is not-found; with `create`, missing directories are made (a file
 * or link in the way is then not-a-directory).
 */
export async function openDir(
  root: FileHandle,
  parts: readonly string[],
  shown: string,
  options: { create?: boolean } = {},
): Promise<FileHandle> {
  let dir = root;
  try {
    for (const part of parts) {
      const next = inherit(root, await openChildDir(dir, part, shown, options.create ?? false));
      if (dir !== root) await dir.close();
      dir = next;
    }
    // The caller owns what it gets; it never gets the root's own handle, which it may close separately.
    return dir === root ? inherit(root, await open(at(root, '.'), DIR_FLAGS)) : dir;
  } catch (err) {
    if (dir !== root) await dir.close();
    throw err;
  }
}

async function openChildDir(
  dir: FileHandle,
  name: string,
  shown: string,
  create: boolean,
): Promise<FileHandle> {
  try {
    return await open(at(dir, name), DIR_FLAGS);
  } catch (err) {
    const code = errnoOf(err);
    if (code === 'ENOENT' && create) {
      try {
        await mkdir(at(dir, name), { mode: 0o755 });
        await adopt(dir, name);
      } catch (made) {
        if (errnoOf(made) !== 'EEXIST') throw made;
      }
      return openChildDir(dir, name, shown, false);
    }
    if (code === 'ENOENT') throw new FileLayerError('not-found', `${shown} does not exist.`);
    // A link (ELOOP) or a file (ENOTDIR) where a directory must be.
    if (code === 'ELOOP' || code === 'ENOTDIR') {
      throw create
        ? new FileLayerError('not-a-directory', `Something other than a directory is in the way of ${shown}.`)
        : new FileLayerError('not-found', `${shown} does not exist.`);
    }
    throw err;
  }
}

/** The volume's root and a directory below it, both open (`dir` may be `root` itself). */
export interface OpenedDir {
  root: FileHandle;
  dir: FileHandle;
  /** Closes both. */
  close(): Promise<void>;
}

/**
 * The volume's root and the directory at `parts` below it, as openRoot then openDir would answer them
 * (the same refusals), reached in one open where the kernel confirms the whole path is link-free (see
 * the head of this file).
 */
export async function openVolumeDir(
  root: VolumeRoot,
  parts: readonly string[],
  shown: string,
  options: { create?: boolean } = {},
): Promise<OpenedDir> {
  const path = typeof root === 'string' ? root : await root.resolve();
  const direct = parts.length > 1 && !options.create;
  const [rootHandle, candidate] = await Promise.allSettled([
    openRootAt(root, path),
    direct ? open(`${path}/${parts.join('/')}`, O_RDONLY | O_DIRECTORY) : Promise.resolve(null),
  ]);
  const found = candidate.status === 'fulfilled' ? candidate.value : null;
  if (rootHandle.status === 'rejected') {
    await found?.close().catch(() => undefined);
    throw rootHandle.reason;
  }
  const opened = rootHandle.value;
  let dir: FileHandle | null = null;
  try {
    const confirmed = found ? await sameName(found, opened, parts).catch(() => false) : false;
    if (found && confirmed) dir = inherit(opened, found);
    else await found?.close();
    // The root itself: one descriptor, closed once.
    if (!dir && parts.length === 0) return { root: opened, dir: opened, close: () => opened.close() };
    dir ??= await openDir(opened, parts, shown, options);
  } catch (err) {
    await opened.close();
    throw err;
  }
  const held = dir;
  return {
    root: opened,
    dir: held,
    close: async () => {
      await Promise.all([held.close(), opened.close()]);
    },
  };
}

/** Whether the kernel names `dir` exactly as `root`'s name followed by `parts`. */
async function sameName(dir: FileHandle, root: FileHandle, parts: readonly string[]): Promise<boolean> {
  const [dirName, rootName] = await Promise.all([
    readlink(`/proc/self/fd/${dir.fd}`, { encoding: 'buffer' }),
    readlink(`/proc/self/fd/${root.fd}`, { encoding: 'buffer' }),
  ]);
  const expected = Buffer.concat([rootName, Buffer.from(`/${parts.join('/')}`)]);
  return dirName.equals(expected);
}
