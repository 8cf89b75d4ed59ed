// The copy of an import: a real SFTP session (ssh2's client) to the address checked when the import was
// started, the remote tree read whole first (so progress is by bytes), then every regular file streamed
// into the volume through the file layer with reads pipelined, a few files at a time. A file already in
// the volume with the remote's size and modification time is skipped: that is how a resumed import
// (after a restart of the platform) continues where it was.
import ssh2 from 'ssh2';
import type { ConnectConfig, FileEntryWithStats, SFTPWrapper, Stats } from 'ssh2';
import type { VolumeImportAccess } from '../../substrate/volume-access.js';
import { OperationError } from '../../operations/errors.js';

const { Client } = ssh2;

/** One read request; OpenSSH and ssh2 both serve at least this much per request. */
const CHUNK = 32 * 1024;
/** Reads in flight for one file, and files copied at once. */
const READS_IN_FLIGHT = 32;
const FILES_AT_ONCE = 4;
const CONNECT_TIMEOUT_MS = 20_000;

export interface RemoteFile {
  /** Relative to the copied directory, starting with `/` (the volume path it lands at). */
  path: string;
  size: number;
  mtimeSec: number;
}

export interface RemoteTree {
  root: string;
  files: RemoteFile[];
  dirs: string[];
}

export interface Progress {
  bytes: number;
  files: number;
  currentFile: string | null;
}

export interface Remote {
  sftp: SFTPWrapper;
  close(): void;
}

/** Connects to `address` itself (an IP literal: nothing is resolved here) and opens the sftp subsystem. */
export function connect(options: {
  address: string;
  port: number;
  username: string;
  password: string;
}): Promise<Remote> {
  const client = new Client();
  const config: ConnectConfig = {
    host: options.address,
    port: options.port,
    username: options.username,
    password: options.password,
    tryKeyboard: false,
    readyTimeout: CONNECT_TIMEOUT_MS,
    keepaliveInterval: 15_000,
    // The customer's own server, met once: no key to compare with; the password is the only secret sent.
    hostVerifier: () => true,
  };
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (err: Error & { level?: string }) => {
      if (settled) return;
      settled = true;
      client.end();
      reject(
        new OperationError(
          err.level === 'client-authentication'
            ? `The SFTP server at ${options.address}:${options.port} refused the username or password.`
            : err.level === 'client-timeout'
              ? `The SFTP server at ${options.address}:${options.port} did not answer in time.`
              : `Could not connect to the SFTP server at ${options.address}:${options.port}.`,
        ),
      );
    };
    client.on('error', fail);
    client.on('ready', () => {
      // Requests are small and answered one by one: Nagle's delay with the peer's delayed ACK would hold
      // each for up to 40 ms (24 ms a 4 KiB file, 20 MB/s for a large one, measured).
      client.setNoDelay(true);
      client.sftp((err, sftp) => {
        if (err) return fail(Object.assign(new Error('sftp'), { level: 'sftp' }));
        settled = true;
        resolve({ sftp, close: () => client.end() });
      });
    });
    client.on('close', () => fail(new Error('closed')));
    client.connect(config);
  });
}

const call = <T>(fn: (cb: (err: Error | null | undefined, value: T) => void) => void): Promise<T> =>
  new Promise((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value))));

/** A name a remote directory listing may hold that we accept as one path component. */
function acceptableName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('\0');
}

const S_IFMT = 0o170000;
const isDir = (attrs: Stats | FileEntryWithStats['attrs']) => (attrs.mode & S_IFMT) === 0o040000;
const isFile = (attrs: Stats | FileEntryWithStats['attrs']) => (attrs.mode & S_IFMT) === 0o100000;

/** The remote directory, read whole: regular files and directories (links and the rest are skipped). */
export async function readRemoteTree(sftp: SFTPWrapper, remotePath: string): Promise<RemoteTree> {
  let root: string;
  let attrs: Stats;
  try {
    root = await call<string>((cb) => sftp.realpath(remotePath, cb));
    attrs = await call<Stats>((cb) => sftp.stat(root, cb));
  } catch {
    throw new OperationError(`The remote path ${remotePath} does not exist or cannot be read.`);
  }
  if (!isDir(attrs)) throw new OperationError(`The remote path ${remotePath} is not a directory.`);
  const files: RemoteFile[] = [];
  const dirs: string[] = [];
  const pending = [''];
  while (pending.length > 0) {
    const rel = pending.pop()!;
    let entries: FileEntryWithStats[];
    try {
      entries = await call<FileEntryWithStats[]>((cb) => sftp.readdir(`${root}${rel}`, cb));
    } catch {
      throw new OperationError(`The remote directory ${rel || '/'} cannot be read.`);
    }
    for (const entry of entries) {
      if (!acceptableName(entry.filename)) continue;
      const path = `${rel}/${entry.filename}`;
      if (isDir(entry.attrs)) {
        dirs.push(path);
        pending.push(path);
      } else if (isFile(entry.attrs)) {
        files.push({ path, size: entry.attrs.size, mtimeSec: entry.attrs.mtime });
      }
    }
  }
  files.sort((a, b) => (a.path < b.path ? -1 : 1));
  dirs.sort();
  return { root, files, dirs };
}

export interface CopyOptions {
  sftp: SFTPWrapper;
  tree: RemoteTree;
  target: VolumeImportAccess;
  cancelled(): boolean;
  onProgress(progress: Progress): void;
  /**
   * Racy clean (git's rule): SFTP times are whole seconds, so a same-size file changed on the remote in
   * the second it was copied reads as complete. A local file whose time is this (the previous import's
   * start, less 2 s of slack, in epoch seconds) or later is copied again. Null: no previous import.
   */
  racyFromSec?: number | null;
}

/** Copies the tree; answers false when it stopped for a cancel (what was copied stays). */
export async function copyTree(options: CopyOptions): Promise<boolean> {
  const { sftp, tree, target } = options;
  for (const dir of tree.dirs) {
    if (options.cancelled()) return false;
    await target.mkdir(dir);
  }
  const progress: Progress = { bytes: 0, files: 0, currentFile: null };
  let next = 0;
  let stopped = false;
  const worker = async () => {
    while (!stopped && next < tree.files.length) {
      if (options.cancelled()) {
        stopped = true;
        return;
      }
      const file = tree.files[next++]!;
      const local = await target.fileInfo(file.path);
      const racy = options.racyFromSec != null && file.mtimeSec >= options.racyFromSec;
      if (local && !racy && local.size === file.size && local.mtimeSec === file.mtimeSec) {
        progress.bytes += file.size;
        progress.files += 1;
        options.onProgress(progress);
        continue;
      }
      progress.currentFile = file.path;
      options.onProgress(progress);
      const copied = await copyFile(sftp, `${tree.root}${file.path}`, file, target, (n) => {
        progress.bytes += n;
        options.onProgress(progress);
      }, options.cancelled);
      if (!copied) {
        stopped = true;
        return;
      }
      progress.files += 1;
      options.onProgress(progress);
    }
  };
  await Promise.all(Array.from({ length: FILES_AT_ONCE }, worker));
  progress.currentFile = null;
  options.onProgress(progress);
  return !stopped;
}

async function copyFile(
  sftp: SFTPWrapper,
  remotePath: string,
  file: RemoteFile,
  target: VolumeImportAccess,
  onBytes: (n: number) => void,
  cancelled: () => boolean,
): Promise<boolean> {
  let handle: Buffer;
  try {
    handle = await call<Buffer>((cb) => sftp.open(remotePath, 'r', cb));
  } catch {
    throw new OperationError(`The remote file ${file.path} cannot be read.`);
  }
  const incoming = await target.create(file.path);
  let committed = false;
  try {
    let position = 0;
    let stop = false;
    const reader = async () => {
      while (!stop && position < file.size) {
        if (cancelled()) {
          stop = true;
          return;
        }
        const at = position;
        const length = Math.min(CHUNK, file.size - at);
        position += length;
        const bytes = await readFully(sftp, handle, at, length, file.path);
        if (bytes.length > 0) await incoming.write(bytes, at);
        onBytes(bytes.length);
        // Shorter than asked: the file shrank on the remote; what it holds now is copied.
        if (bytes.length < length) stop = true;
      }
    };
    await Promise.all(Array.from({ length: READS_IN_FLIGHT }, reader));
    if (cancelled() && position < file.size) return false;
    await incoming.commit(file.mtimeSec);
    committed = true;
    return true;
  } finally {
    if (!committed) await incoming.abort();
    sftp.close(handle, () => undefined);
  }
}

async function readFully(
  sftp: SFTPWrapper,
  handle: Buffer,
  position: number,
  length: number,
  shown: string,
): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const got = await new Promise<number>((resolve, reject) =>
      sftp.read(handle, buffer, done, length - done, position + done, (err, bytesRead) => {
        // ssh2 reports the end of the file as an error of code 1 (SSH_FX_EOF).
        if (err && (err as { code?: number }).code === 1) return resolve(0);
        if (err) return reject(new OperationError(`Reading the remote file ${shown} failed.`));
        resolve(bytesRead);
      }),
    );
    if (got === 0) break;
    done += got;
  }
  return done === length ? buffer : buffer.subarray(0, done);
}

/**
 * With delete_extraneous, after a complete copy: what the volume holds that the remote tree does not
 * (an import's own temporary files left by a killed run included), deepest first.
 */
export async function deleteExtraneous(tree: RemoteTree, target: VolumeImportAccess): Promise<number> {
  const keep = new Set([...tree.files.map((f) => f.path), ...tree.dirs]);
  let removed = 0;
  for (const entry of await target.tree()) {
    // A remote name never starts like our temporary files do unless the customer's tree has one: keep it then.
    if (keep.has(entry.path) && entry.kind !== 'other') continue;
    await target.remove(entry.path);
    removed += 1;
  }
  return removed;
}
