// Snapshots of the local substrate: a volume archived with the system's GNU tar, compressed by zstd, under
// DATA_DIR/snapshots/<volumeId>/<snapshotId>.tar.zst. Bytes stream from process to process (tar into zstd,
// which writes the archive to a file this one opened; the SHA-256 is taken by reading that file back from
// the page cache as it grows), never through a buffer of this one's that grows, so its memory stays flat
// whatever the volume's size. An archive is written under a temporary name, synced and renamed when
// complete, so a snapshot that exists is whole; its size and SHA-256 are what the caller records and what a
// restore checks. The work is what an operator's `tar | zstd -1 -T0 -o ARCHIVE && sync ARCHIVE` does, plus
// the digest and progress (scripts/bench/backups.ts holds it to 0.8 of that, same bytes, same run).
//
// A restore unpacks into a directory beside the volume, verifying the archive's SHA-256 as it unpacks,
// syncs it, and only then swaps it in with renames: `.<vol>.unpack-<snap>` (partial, thrown away), renamed
// `.<vol>.restored-<snap>` once whole, verified and on disk, then the volume moved to `.<vol>.old` and the
// restored directory to the volume's name. A crash between those two renames leaves no volume and a whole
// restored directory, which recoverVolume finishes; at every instant the data is the old or the new.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  SnapshotIntegrityError,
  type SnapshotInfo,
  type SnapshotRef,
  type TransferOptions,
} from '../driver.js';
import type { LocalLayout } from './layout.js';
import { findProgram } from './programs.js';

// Fast compression: a backup is read back whole or not at all, and the time is the customer's wait.
// -T0 lets zstd use every core while tar reads.
const ZSTD_CREATE = ['-1', '-T0', '-q', '-c'];
// How long the digest waits for zstd to write more when it has read all there is.
const FOLLOW_POLL_MS = 5;
const ZSTD_EXTRACT = ['-d', '-q', '-c'];
// A checkpoint every 1000 records (10 MB): tar says on stderr how many bytes it wrote so far. Records stay
// tar's 10 KiB: with larger ones the zeros padding the last record are more than the unpacking tar reads
// after the end marker, and zstd, feeding it, dies of SIGPIPE.
const TAR_PROGRESS = ['--checkpoint=1000', '--checkpoint-action=echo=%{w}T'];
const STDERR_KEEP = 4096;
// Larger reads than the stream default (64 KiB): fewer trips through this process per archive.
const READ_CHUNK = 1024 * 1024;
// OpenSSL's SHA-256 uses the CPU's SHA instructions: 5x coreutils' sha256sum here (0.34 s against
// 1.8 s for 300 MB), which made the digest, not zstd, the slowest stage of a backup. sha256sum where
// the openssl program is not installed. Both print the digest in hex first, then a space.
const HAS_OPENSSL = findProgram('openssl') !== null;
/** The program and arguments that print the SHA-256 of `input` (a path, or '-' for stdin). */
function sha256Command(input: string): [string, string[]] {
  return HAS_OPENSSL ? ['openssl', ['dgst', '-sha256', '-r', input]] : ['sha256sum', ['-b', input]];
}

export async function createSnapshot(
  layout: LocalLayout,
  snapshot: SnapshotRef,
  options: TransferOptions = {},
): Promise<SnapshotInfo> {
  const volume = await existingVolumeDir(layout, snapshot.volumeId);
  const file = layout.snapshotFile(snapshot.volumeId, snapshot.id);
  // Taken before (the job died after the rename): it is the snapshot; say what it is.
  const made = await infoOf(file);
  if (made) return made;
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await removeTemporaries(file);
  const tmp = `${file}.${process.pid}.${Date.now().toString(36)}.tmp`;
  // du walks the tree while tar starts; a figure tar gives before du answers waits for it.
  let total: number | null = null;
  let pending: number | null = null;
  const totalKnown = volumeBytes(volume).then((bytes) => {
    total = bytes;
    if (pending !== null) options.onProgress?.(pending, bytes);
    return bytes;
  });
  // Awaited below; until then a failure of du must not count as unhandled.
  totalKnown.catch(() => undefined);
  // zstd writes the archive itself (to a file this process opened), as an operator's `zstd -o` does, and
  // the digest follows the file as it grows, reading what is already in the page cache: a tee and a
  // SHA-256 program behind it copied every compressed byte through two more pipes and processes (0.52-0.61
  // of tar | zstd -o before, 0.72-0.78 after, scripts/bench/backups.ts). What is left is the SHA-256
  // itself, about 85 ms of CPU for 95 MB, on cores zstd -T0 already fills.
  const out = await open(tmp, 'wx', 0o600);
  const tar = spawnTool('tar', [
    '--create',
    '--file=-',
    `--directory=${volume}`,
    '--numeric-owner',
    ...TAR_PROGRESS,
    '.',
  ]);
  const zstd = spawnTool('zstd', ZSTD_CREATE, tar.process.stdout!, out.fd);
  tar.onStderrLine((line) => {
    const written = /^tar: (\d+) /.exec(line);
    if (!written) return;
    if (total === null) pending = Number(written[1]);
    else options.onProgress?.(Number(written[1]), total);
  });
  let size: number;
  let sha256: string;
  let volumeTotal: number;
  try {
    const compressed = zstd.exited([0]);
    [, , sha256, volumeTotal] = await Promise.all([
      // GNU tar exits 1 when a file changed while it was read: a live volume's snapshot is taken as it was.
      tar.exited([0, 1]),
      compressed,
      digestFollowing(tmp, compressed),
      totalKnown,
    ]);
    await out.sync();
    size = (await out.stat()).size;
    await out.close();
    await rename(tmp, file);
  } catch (err) {
    for (const tool of [tar, zstd]) tool.process.kill('SIGKILL');
    await out.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw await tellingFailure(err, [zstd, tar]);
  }
  options.onProgress?.(volumeTotal, volumeTotal);
  return { sizeBytes: size, sha256 };
}

/**
 * The SHA-256 of a file another process is writing, read as it grows and to its end once `written`
 * resolves (its writer has exited, so every byte is in the file). Rejects with `written`.
 */
async function digestFollowing(file: string, written: Promise<void>): Promise<string> {
  let done = false;
  void written.then(
    () => (done = true),
    () => undefined,
  );
  const input = await open(file, 'r');
  try {
    const hash = createHash('sha256');
    const buffer = Buffer.allocUnsafe(READ_CHUNK);
    for (let position = 0; ;) {
      // Read after the writer's end was seen: a short read then is the end of the file, not a pause.
      const ended = done;
      const { bytesRead } = await input.read(buffer, 0, buffer.length, position);
      position += bytesRead;
      if (bytesRead > 0) hash.update(buffer.subarray(0, bytesRead));
      else if (ended) return hash.digest('hex');
      else await Promise.race([written, new Promise((resolve) => setTimeout(resolve, FOLLOW_POLL_MS))]);
    }
  } finally {
    await input.close();
  }
}

export async function restoreSnapshot(
  layout: LocalLayout,
  snapshot: SnapshotRef,
  expected: SnapshotInfo,
  options: TransferOptions = {},
): Promise<void> {
  const { volumeId } = snapshot;
  const volume = layout.volumeDir(volumeId);
  const beside = (what: string) => join(layout.volumesDir, `.${volumeId}.${what}`);
  const restored = beside(`restored-${snapshot.id}`);
  await recoverVolume(layout, volumeId);
  if (!(await exists(restored))) {
    // What an earlier restore left half done is of no use: another starts from the archive.
    await removeBeside(layout, volumeId);
    const file = layout.snapshotFile(volumeId, snapshot.id);
    const size = (await stat(file).catch(() => null))?.size;
    if (size === undefined) throw new SnapshotIntegrityError('The backup archive is missing.');
    if (size !== expected.sizeBytes) {
      throw new SnapshotIntegrityError(
        'The backup archive does not have the size recorded when it was made.',
      );
    }
    await existingVolumeDir(layout, volumeId);
    const unpack = beside(`unpack-${snapshot.id}`);
    await mkdir(unpack, { mode: 0o700 });
    try {
      const sha256 = await unpackArchive(file, unpack, size, options);
      if (sha256 !== expected.sha256) {
        throw new SnapshotIntegrityError(
          'The backup archive does not match the checksum recorded when it was made.',
        );
      }
    } catch (err) {
      await rm(unpack, { recursive: true, force: true });
      // A damaged archive fails zstd or tar before its end: the checksum says why.
      if (!(err instanceof SnapshotIntegrityError) && (await sha256Of(file)) !== expected.sha256) {
        throw new SnapshotIntegrityError(
          'The backup archive does not match the checksum recorded when it was made.',
        );
      }
      throw err;
    }
    // On disk before the old data is removed: a crash after the swap must not leave files whose blocks
    // never reached the disk. One syncfs of the volumes' file system, as `sync -f` by hand, rather than
    // an fsync per restored file.
    await spawnTool('sync', ['-f', unpack]).exited([0]);
    await rename(unpack, restored);
  }
  // The swap: the old data aside, the restored data in its place, then the old data gone.
  const old = beside('old');
  await rm(old, { recursive: true, force: true });
  if (await exists(volume)) await rename(volume, old);
  await rename(restored, volume);
  await rm(old, { recursive: true, force: true });
  options.onProgress?.(expected.sizeBytes, expected.sizeBytes);
}

export async function deleteSnapshot(layout: LocalLayout, snapshot: SnapshotRef): Promise<void> {
  const file = layout.snapshotFile(snapshot.volumeId, snapshot.id);
  await removeTemporaries(file);
  await rm(file, { force: true });
  await rmdir(dirname(file)).catch(() => undefined);
}

/**
 * A volume a restore was swapping when it died: its name is empty and the whole restored directory (or,
 * before that, the old data) lies beside it. Puts one of them back in place; a volume in place is left.
 */
export async function recoverVolume(layout: LocalLayout, volumeId: string): Promise<void> {
  const volume = layout.volumeDir(volumeId);
  if (await exists(volume)) return;
  const prefix = `.${volumeId}.`;
  const names = (await readdir(layout.volumesDir).catch(() => [] as string[])).filter((n) =>
    n.startsWith(prefix),
  );
  const restored = names.find((n) => n.startsWith(`${prefix}restored-`));
  const old = names.find((n) => n === `${prefix}old`);
  const from = restored ?? old;
  if (from) await rename(join(layout.volumesDir, from), volume);
}

async function removeBeside(layout: LocalLayout, volumeId: string): Promise<void> {
  const prefix = `.${volumeId}.`;
  for (const name of await readdir(layout.volumesDir).catch(() => [] as string[])) {
    if (name.startsWith(prefix)) await rm(join(layout.volumesDir, name), { recursive: true, force: true });
  }
}

/** Reads the archive once: into the SHA-256, and through zstd into tar, which unpacks it into `into`. */
async function unpackArchive(
  file: string,
  into: string,
  size: number,
  options: TransferOptions,
): Promise<string> {
  const zstd = spawnTool('zstd', ZSTD_EXTRACT, 'pipe');
  const tar = spawnTool(
    'tar',
    ['--extract', '--file=-', `--directory=${into}`, '--numeric-owner'],
    zstd.process.stdout!,
  );
  // The digest is taken by its own process reading the same file (from the page cache), beside the
  // unpacking rather than in this one's path: hashing in this process (OpenSSL too, but one more
  // stage on the same thread as the copy into zstd) was the restore's slowest stage on 2 cores.
  const sum = spawnTool(...sha256Command(file));
  let digest = '';
  sum.process.stdout!.setEncoding('utf8');
  sum.process.stdout!.on('data', (text: string) => (digest += text));
  let read = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      read += chunk.length;
      options.onProgress?.(read, size);
      done(null, chunk);
    },
  });
  try {
    await Promise.all([
      pipeline(createReadStream(file, { highWaterMark: READ_CHUNK }), counted, zstd.process.stdin!),
      zstd.exited([0]),
      tar.exited([0]),
      sum.exited([0]),
    ]);
  } catch (err) {
    for (const tool of [zstd, tar, sum]) tool.process.kill('SIGKILL');
    throw await tellingFailure(err, [tar, zstd, sum]);
  }
  const sha256 = /^([0-9a-f]{64}) /.exec(digest)?.[1];
  if (!sha256) throw new Error(`the SHA-256 program answered ${JSON.stringify(digest.slice(0, 100))}`);
  return sha256;
}

/**
 * The failure that says why: when the disk fills, tee (or tar) fails with ENOSPC, but its neighbour in the
 * pipe may be seen first dying of SIGPIPE. Waits for every tool to end and prefers the one whose stderr
 * says the disk is full, so the caller can tell a full disk (permanent) from a passing failure.
 */
async function tellingFailure(first: unknown, tools: Tool[]): Promise<unknown> {
  const ends = await Promise.allSettled(tools.map((tool) => tool.exited([0])));
  for (const end of ends) {
    if (end.status === 'rejected' && /No space left on device|Disk quota exceeded/.test(String(end.reason)))
      return end.reason as unknown;
  }
  return first;
}

interface Tool {
  process: ChildProcess;
  /** Resolves when it exits with one of `codes`; rejects otherwise, with the end of its stderr. */
  exited(codes: number[]): Promise<void>;
  onStderrLine(listener: (line: string) => void): void;
}

function spawnTool(
  command: string,
  args: string[],
  stdin: 'ignore' | 'pipe' | Readable = 'ignore',
  stdout: 'pipe' | number = 'pipe',
): Tool {
  const child = spawn(command, args, {
    stdio: [stdin, stdout, 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' },
  });
  // The child has its own copy of a pipe handed to it: ours is closed, or this end's 'close' (and so
  // the handing process's) would wait on it for ever.
  if (typeof stdin !== 'string') stdin.destroy();
  let stderr = '';
  let partial = '';
  const listeners: ((line: string) => void)[] = [];
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (text: string) => {
    partial += text;
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!/^tar: \d+ /.test(line)) stderr = `${stderr}${line}\n`.slice(-STDERR_KEEP);
      for (const listener of listeners) listener(line);
    }
  });
  const done = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
  return {
    process: child,
    async exited(codes) {
      const code = await done;
      if (code === null || !codes.includes(code)) {
        throw new Error(`${command} failed (exit ${code ?? 'by a signal'}): ${stderr.trim()}`);
      }
    },
    onStderrLine: (listener) => listeners.push(listener),
  };
}

/** The snapshot's size and SHA-256 when its archive exists, else null. */
async function infoOf(file: string): Promise<SnapshotInfo | null> {
  const size = (await stat(file).catch(() => null))?.size;
  if (size === undefined) return null;
  return { sizeBytes: size, sha256: await sha256Of(file) };
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** What a killed snapshot left: its temporary files. */
async function removeTemporaries(file: string): Promise<void> {
  const prefix = `${basename(file)}.`;
  for (const name of await readdir(dirname(file)).catch(() => [] as string[])) {
    if (name.startsWith(prefix) && name.endsWith('.tmp'))
      await rm(join(dirname(file), name), { force: true });
  }
}

/** The bytes of the volume's files, for progress (du's apparent size). */
async function volumeBytes(volume: string): Promise<number> {
  const du = spawnTool('du', ['-s', '-b', volume]);
  let out = '';
  du.process.stdout!.setEncoding('utf8');
  du.process.stdout!.on('data', (text: string) => (out += text));
  // du exits 1 when a file vanished under it: its sum is still the right size to show progress by.
  await du.exited([0, 1]);
  return Number(out.split(/\s/)[0]) || 0;
}

async function existingVolumeDir(layout: LocalLayout, volumeId: string): Promise<string> {
  await recoverVolume(layout, volumeId);
  const dir = layout.volumeDir(volumeId);
  if (await exists(dir)) return dir;
  throw new Error(`volume ${volumeId} does not exist`);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
