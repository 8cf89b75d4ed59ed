// The remote tree of an import, read within DECISIONS.md §8's limits and held with bounded memory: a
// directory is read a batch at a time through its handle (ssh2's readdir by path would gather a listing
// that never ends whole), every name counts toward 100,000 whatever its kind, and a directory deeper than
// 64 levels ends the listing. An entry keeps its name and its parent, never its full path (64 levels of
// 255-byte names would be 16 KiB a path): with names of at most 255 bytes kept, the tree is some 600
// bytes an entry at worst (a 255-character two-byte string, the object, its slot in the parent's map),
// some 60 MB for 100,000; 23 MiB measured for 100,000 short names (scripts/bench/import-files.ts).
import type { FileEntryWithStats, SFTPWrapper, Stats } from 'ssh2';
import { OperationError } from '../../operations/errors.js';
import { ImportStopped, type RemoteGuard } from './guard.js';
import { IMPORT_LIMITS, MAX_NAME_BYTES, type ImportLimits } from './limits.js';

export class RemoteDir {
  /** Subdirectories and files by name (delete_extraneous looks volume paths up here). */
  readonly children = new Map<string, RemoteDir | RemoteFile>();
  constructor(
    readonly parent: RemoteDir | null,
    readonly name: string,
    readonly depth: number,
  ) {}

  /** Relative to the copied directory, starting with `/` (the volume path it lands at); '' for the root. */
  get path(): string {
    return this.parent ? `${this.parent.path}/${this.name}` : '';
  }
}

export class RemoteFile {
  constructor(
    readonly parent: RemoteDir,
    readonly name: string,
    readonly size: number,
    readonly mtimeSec: number,
  ) {}

  get path(): string {
    return `${this.parent.path}/${this.name}`;
  }
}

export interface RemoteTree {
  /** The remote's absolute path of the copied directory. */
  root: string;
  top: RemoteDir;
  /** In path order; a directory before what it holds. */
  files: RemoteFile[];
  dirs: RemoteDir[];
}

const call = <T>(fn: (cb: (err: Error | null | undefined, value: T) => void) => void): Promise<T> =>
  new Promise((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value))));

/** ssh2's readdir by handle with `.` and `..` kept (its types leave the options out). */
const readdirFull = (sftp: SFTPWrapper, handle: Buffer, cb: (err: Error | undefined, list: FileEntryWithStats[]) => void) =>
  (sftp as unknown as { readdir(h: Buffer, o: { full: boolean }, c: typeof cb): void }).readdir(handle, { full: true }, cb);

const S_IFMT = 0o170000;
export const isDir = (attrs: Stats | FileEntryWithStats['attrs']) => (attrs.mode & S_IFMT) === 0o040000;
const isFile = (attrs: Stats | FileEntryWithStats['attrs']) => (attrs.mode & S_IFMT) === 0o100000;
const SSH_FX_EOF = 1;

/** A name a listing may hold that we accept as one path component of a volume. */
function acceptableName(name: string): boolean {
  return (
    name !== '' &&
    name !== '.' &&
    name !== '..' &&
    !name.includes('/') &&
    !name.includes('\0') &&
    Buffer.byteLength(name) <= MAX_NAME_BYTES
  );
}

/** Whether the volume path `path` is a directory or file of the tree. */
export function inTree(tree: RemoteTree, path: string): boolean {
  let node: RemoteDir | RemoteFile | undefined = tree.top;
  for (const part of path.split('/').filter(Boolean)) {
    if (!(node instanceof RemoteDir)) return false;
    node = node.children.get(part);
  }
  return node !== undefined;
}

/** The remote directory's regular files and directories (links and the rest are skipped, but counted). */
export async function readRemoteTree(
  sftp: SFTPWrapper,
  remotePath: string,
  guard: RemoteGuard,
  limits: ImportLimits = IMPORT_LIMITS,
): Promise<RemoteTree> {
  let root: string;
  let attrs: Stats;
  try {
    root = await guard.wait(`resolving ${remotePath}`, call<string>((cb) => sftp.realpath(remotePath, cb)));
    attrs = await guard.wait(`reading ${remotePath}`, call<Stats>((cb) => sftp.stat(root, cb)));
  } catch (err) {
    if (err instanceof ImportStopped) throw err;
    throw new OperationError(`The remote path ${remotePath} does not exist or cannot be read.`);
  }
  if (!isDir(attrs)) throw new OperationError(`The remote path ${remotePath} is not a directory.`);
  const top = new RemoteDir(null, '', 0);
  const tree: RemoteTree = { root, top, files: [], dirs: [] };
  let entries = 0;
  const pending: RemoteDir[] = [top];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    if (dir !== top) tree.dirs.push(dir);
    const shown = dir.path || '/';
    const found: (RemoteDir | RemoteFile)[] = [];
    await readDirectory(sftp, `${root}${dir.path}`, shown, guard, (entry) => {
      entries += 1;
      if (entries > limits.maxEntries) {
        throw new OperationError(
          `The remote listing has more than ${limits.maxEntries.toLocaleString('en-US')} entries, the most an import reads (at ${shown}).`,
        );
      }
      if (entry === null || !acceptableName(entry.filename) || dir.children.has(entry.filename)) return;
      if (isDir(entry.attrs)) {
        if (dir.depth + 1 > limits.maxDepth) {
          throw new OperationError(
            `The remote tree is deeper than ${limits.maxDepth} levels, the most an import reads (at ${shown}).`,
          );
        }
        found.push(new RemoteDir(dir, entry.filename, dir.depth + 1));
      } else if (isFile(entry.attrs)) {
        found.push(new RemoteFile(dir, entry.filename, entry.attrs.size, entry.attrs.mtime));
      }
    });
    // Path order: a directory's names sorted, its subdirectories visited in that order.
    found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of found) dir.children.set(entry.name, entry);
    for (const entry of found) if (entry instanceof RemoteFile) tree.files.push(entry);
    for (let i = found.length - 1; i >= 0; i--) {
      const entry = found[i]!;
      if (entry instanceof RemoteDir) pending.push(entry);
    }
  }
  return tree;
}

/**
 * Every name of one remote directory, a batch (one SFTP packet, 256 KiB at most) at a time. `.` and `..`
 * are passed over once each; any more of them, and an empty batch (as `null`), count as entries, or a
 * server answering with those forever would never reach the limit.
 */
async function readDirectory(
  sftp: SFTPWrapper,
  path: string,
  shown: string,
  guard: RemoteGuard,
  onEntry: (entry: FileEntryWithStats | null) => void,
): Promise<void> {
  const doing = `listing ${shown}`;
  let handle: Buffer;
  try {
    handle = await guard.wait(doing, call<Buffer>((cb) => sftp.opendir(path, cb)));
  } catch (err) {
    if (err instanceof ImportStopped) throw err;
    throw new OperationError(`The remote directory ${shown} cannot be read.`);
  }
  let dot = false;
  let dotdot = false;
  try {
    for (;;) {
      let batch: FileEntryWithStats[];
      try {
        batch = await guard.wait(doing, call<FileEntryWithStats[]>((cb) => readdirFull(sftp, handle, cb)));
      } catch (err) {
        if (err instanceof ImportStopped) throw err;
        if ((err as { code?: number }).code === SSH_FX_EOF) return;
        throw new OperationError(`The remote directory ${shown} cannot be read.`);
      }
      if (batch.length === 0) onEntry(null);
      for (const entry of batch) {
        if ((entry.filename === '.' && !dot) || (entry.filename === '..' && !dotdot)) {
          if (entry.filename === '.') dot = true;
          else dotdot = true;
          continue;
        }
        onEntry(entry);
      }
      guard.check();
    }
  } finally {
    if (!guard.reason) sftp.close(handle, () => undefined);
  }
}
