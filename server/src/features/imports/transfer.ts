// The copy of an import: a real SFTP session (ssh2's client) to the address checked when the import was
// started, the remote tree read first within its limits (listing.ts; so progress is by bytes), then every
// regular file streamed into the volume through the file layer with reads pipelined, a few files at a
// time: at most FILES_AT_ONCE × READS_IN_FLIGHT × CHUNK (4 MiB) of file data in hand. A file already in
// the volume with the remote's size and modification time is skipped: that is how a resumed import
// (after a restart of the platform) continues where it was. Every wait for the remote goes through the
// import's guard (guard.ts), which ends it on a cancel or a stall by destroying the connection: the
// transfer is what is stopped, never the process running it.
import ssh2 from 'ssh2';
import type { ConnectConfig, SFTPWrapper } from 'ssh2';
import type { VolumeImportAccess } from '../../substrate/volume-access.js';
import { OperationError } from '../../operations/errors.js';
import { FileLayerError } from '../../substrate/local/files/index.js';
import { ImportStopped, type RemoteGuard } from './guard.js';
import { inTree, type RemoteFile, type RemoteTree } from './listing.js';

export { readRemoteTree, type RemoteTree, type RemoteFile } from './listing.js';

const { Client } = ssh2;

/** One read request; OpenSSH and ssh2 both serve at least this much per request. */
const CHUNK = 32 * 1024;
/** Reads in flight for one file, and files copied at once. */
const READS_IN_FLIGHT = 32;
const FILES_AT_ONCE = 4;

export interface Progress {
  bytes: number;
  files: number;
  currentFile: string | null;
}

export interface Remote {
  sftp: SFTPWrapper;
  close(): void;
}

/**
 * Waits before each further attempt when the remote cannot be reached at all (refused, reset, no
 * route): it may be restarting, as a resumed import's platform just did. About 20 s in all, then the
 * import fails; a refused password or SFTP session is an answer, never retried.
 */
const CONNECT_RETRY_DELAYS_MS: readonly number[] = [250, 500, 1000, 2000, 4000, 4000, 4000, 4000];

/** A failure before the remote's SSH greeting: nothing answered, so another attempt may. */
class NoAnswer extends Error {
  constructor(readonly reason: unknown) {
    super('no answer');
  }
}

/**
 * Connects to `address` itself (an IP literal: nothing is resolved here) and opens the sftp subsystem;
 * each step (connecting, signing in, opening SFTP) a wait of the guard's, and so is each pause between
 * attempts (a cancel ends it at once).
 */
export async function connect(
  options: { address: string; port: number; username: string; password: string },
  guard: RemoteGuard,
): Promise<Remote> {
  const peer = `${options.address}:${options.port}`;
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await connectOnce(options, guard);
    } catch (err) {
      if (err instanceof ImportStopped) throw err;
      const delay = CONNECT_RETRY_DELAYS_MS[attempt];
      if (err instanceof NoAnswer && delay !== undefined) {
        await guard.wait('connecting', new Promise((resolve) => setTimeout(resolve, delay)));
        continue;
      }
      const level = (err as { level?: string }).level;
      // Tried for a while, or answered with a refusal: what the customer can act on.
      throw new OperationError(
        level === 'client-authentication'
          ? `The SFTP server at ${peer} refused the username or password.`
          : level === 'sftp'
            ? `The SFTP server at ${peer} did not open an SFTP session.`
            : `Could not connect to the SFTP server at ${peer}.`,
      );
    }
  }
}

async function connectOnce(
  options: { address: string; port: number; username: string; password: string },
  guard: RemoteGuard,
): Promise<Remote> {
  const client = new Client();
  guard.onStop(() => client.destroy());
  const config: ConnectConfig = {
    host: options.address,
    port: options.port,
    username: options.username,
    password: options.password,
    tryKeyboard: false,
    // The guard's stall deadline covers connecting and signing in, on the app's clock.
    readyTimeout: 0,
    keepaliveInterval: 15_000,
    // The customer's own server, met once: no key to compare with; the password is the only secret sent.
    hostVerifier: () => true,
  };
  let failure: Error & { level?: string } = new Error('closed');
  const ended = new Promise<never>((_resolve, reject) => {
    client.on('error', (err: Error & { level?: string }) => {
      failure = err;
      reject(err);
    });
    client.on('close', () => reject(failure));
  });
  ended.catch(() => undefined);
  const handshake = Promise.race([
    new Promise<void>((resolve) => client.once('handshake', () => resolve())),
    ended,
  ]);
  const ready = Promise.race([new Promise<void>((resolve) => client.once('ready', resolve)), ended]);
  ready.catch(() => undefined);
  try {
    client.connect(config);
    try {
      await guard.wait('connecting', handshake);
    } catch (err) {
      throw err instanceof ImportStopped ? err : new NoAnswer(err);
    }
    await guard.wait('signing in', ready);
    // Requests are small and answered one by one: Nagle's delay with the peer's delayed ACK would hold
    // each for up to 40 ms (24 ms a 4 KiB file, 20 MB/s for a large one, measured).
    client.setNoDelay(true);
    const opened = new Promise<SFTPWrapper>((resolve, reject) =>
      client.sftp((err, sftp) => (err ? reject(Object.assign(err, { level: 'sftp' })) : resolve(sftp))),
    );
    const sftp = await guard.wait('opening the SFTP session', Promise.race([opened, ended]));
    // A protocol error (an oversized packet) is emitted here: it ends the session, never the process.
    sftp.on('error', () => undefined);
    return { sftp, close: () => client.end() };
  } catch (err) {
    client.destroy();
    throw err;
  }
}

const call = <T>(fn: (cb: (err: Error | null | undefined, value: T) => void) => void): Promise<T> =>
  new Promise((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value))));

/** Runs `count` copies of `worker`; once every one has ended, rethrows the first failure. */
async function together(count: number, worker: () => Promise<void>): Promise<void> {
  const results = await Promise.allSettled(Array.from({ length: count }, worker));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  // A stop is the reason the others failed too: it is what is reported.
  const stopped = results.find((r) => r.status === 'rejected' && r.reason instanceof ImportStopped);
  if (stopped || failed) throw ((stopped ?? failed) as PromiseRejectedResult).reason;
}

export interface CopyOptions {
  sftp: SFTPWrapper;
  tree: RemoteTree;
  target: VolumeImportAccess;
  guard: RemoteGuard;
  onProgress(progress: Progress): void;
  /**
   * Racy clean (git's rule): SFTP times are whole seconds, so a same-size file changed on the remote in
   * the second it was copied reads as complete. A local file whose time is this (the previous import's
   * start, less 2 s of slack, in epoch seconds) or later is copied again. Null: no previous import.
   */
  racyFromSec?: number | null;
}

/** Copies the tree; a stop (cancel, stall) throws ImportStopped, leaving what was complete. */
export async function copyTree(options: CopyOptions): Promise<void> {
  const { sftp, tree, target, guard } = options;
  for (const dir of tree.dirs) {
    guard.check();
    await target.mkdir(dir.path);
  }
  const progress: Progress = { bytes: 0, files: 0, currentFile: null };
  let next = 0;
  await together(FILES_AT_ONCE, async () => {
    while (next < tree.files.length) {
      guard.check();
      const file = tree.files[next++]!;
      const path = file.path;
      const local = await target.fileInfo(path);
      const racy = options.racyFromSec != null && file.mtimeSec >= options.racyFromSec;
      if (local && !racy && local.size === file.size && local.mtimeSec === file.mtimeSec) {
        progress.bytes += file.size;
        progress.files += 1;
        options.onProgress(progress);
        continue;
      }
      progress.currentFile = path;
      options.onProgress(progress);
      await copyFile(sftp, `${tree.root}${path}`, path, file, target, guard, (n) => {
        progress.bytes += n;
        options.onProgress(progress);
      });
      progress.files += 1;
      options.onProgress(progress);
    }
  });
  progress.currentFile = null;
  options.onProgress(progress);
}

async function copyFile(
  sftp: SFTPWrapper,
  remotePath: string,
  path: string,
  file: RemoteFile,
  target: VolumeImportAccess,
  guard: RemoteGuard,
  onBytes: (n: number) => void,
): Promise<void> {
  let handle: Buffer;
  try {
    handle = await guard.wait(
      `opening ${path}`,
      call<Buffer>((cb) => sftp.open(remotePath, 'r', cb)),
    );
  } catch (err) {
    if (err instanceof ImportStopped) throw err;
    throw new OperationError(`The remote file ${path} cannot be read.`);
  }
  const incoming = await target.create(path);
  let committed = false;
  try {
    let position = 0;
    let stop = false;
    await together(READS_IN_FLIGHT, async () => {
      while (!stop && position < file.size) {
        guard.check();
        const at = position;
        const length = Math.min(CHUNK, file.size - at);
        position += length;
        const bytes = await readFully(sftp, handle, at, length, path, guard);
        if (bytes.length > 0) await incoming.write(bytes, at);
        onBytes(bytes.length);
        // Shorter than asked: the file shrank on the remote; what it holds now is copied.
        if (bytes.length < length) stop = true;
      }
    });
    guard.check();
    await incoming.commit(file.mtimeSec);
    committed = true;
  } finally {
    // However the copy of this file ended, its temporary file goes (the name keeps what it had).
    if (!committed) await incoming.abort();
    if (!guard.reason) sftp.close(handle, () => undefined);
  }
}

async function readFully(
  sftp: SFTPWrapper,
  handle: Buffer,
  position: number,
  length: number,
  shown: string,
  guard: RemoteGuard,
): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const got = await guard.wait(
      `reading ${shown}`,
      new Promise<number>((resolve, reject) =>
        sftp.read(handle, buffer, done, length - done, position + done, (err, bytesRead) => {
          // ssh2 reports the end of the file as an error of code 1 (SSH_FX_EOF).
          if (err && (err as { code?: number }).code === 1) return resolve(0);
          if (err) return reject(new OperationError(`Reading the remote file ${shown} failed.`));
          resolve(bytesRead);
        }),
      ),
    );
    if (got === 0) break;
    done += got;
  }
  return done === length ? buffer : buffer.subarray(0, done);
}

/**
 * With delete_extraneous, after a complete copy: what the volume holds that the remote tree does not
 * (an import's own temporary files left by a killed run included), deepest first. A stop (cancel) ends it
 * between two removals: on a volume reached through a cluster a removal is a round trip, and thousands of
 * them outlast the 5 s a cancel has to take effect in (DECISIONS.md §8).
 */
export async function deleteExtraneous(
  tree: RemoteTree,
  target: VolumeImportAccess,
  guard?: RemoteGuard,
): Promise<number> {
  let removed = 0;
  for (const entry of await target.tree()) {
    // A remote name never starts like our temporary files do unless the customer's tree has one: keep it then.
    if (entry.kind !== 'other' && inTree(tree, entry.path)) continue;
    guard?.check();
    try {
      await target.remove(entry.path);
    } catch (err) {
      // What the file layer never touches (/proc, /sys, /dev: a confined unit's mount points) is the
      // platform's, not the customer's: left where it is.
      if (err instanceof FileLayerError && err.code === 'invalid-path') continue;
      throw err;
    }
    removed += 1;
  }
  return removed;
}
