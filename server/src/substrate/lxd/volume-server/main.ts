// The volume server: the confined file layer (local/files/) run inside the LXD cluster, in the volume host
// instance (volume-host.ts), on one volume's mount, answering calls framed on stdin/stdout (frames.ts) that
// the driver sends over an exec's pipes (volume-client.ts). It is bundled into the unit image like the
// agent. Calls run concurrently, each answered under its request id. Open files, pending uploads and
// incoming import files are held here by number until closed, or until the driver hangs up.
//
// Errors: the layer's FileLayerError crosses with its code and detail (they name only volume paths); a
// system error crosses as its errno code alone (SFTP answers EEXIST, EPERM, ENOSPC by it); anything else
// as a generic failure, its message kept in this process.
import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { resetMachineAccess, writeMachineAccess } from '../../local/access.js';
import { credentialsOf } from '../../machine-credentials.js';
import { installedImage, installImage } from '../../local/images.js';
import {
  FileLayerError,
  VolumeFiles,
  VolumeImportTarget,
  type IncomingFile,
  type OpenedFile,
  type PendingFile,
} from '../../local/files/index.js';
import { oneVolumeLayout } from '../volume-layout.js';
import { encodeFrame, FrameReader, type Frame } from './frames.js';

/** errno codes the driver side may act on; any other system error is generic. */
const PASSED_ERRNO = new Set([
  'EEXIST',
  'EACCES',
  'EPERM',
  'ENOSPC',
  'EDQUOT',
  'ENOENT',
  'ENOTEMPTY',
  'EISDIR',
]);

export interface WireStats {
  mode: number;
  uid: number;
  gid: number;
  size: number;
  nlink: number;
  atimeMs: number;
  mtimeMs: number;
}

const wireStats = (s: Stats): WireStats => ({
  mode: s.mode,
  uid: s.uid,
  gid: s.gid,
  size: s.size,
  nlink: s.nlink,
  atimeMs: s.atimeMs,
  mtimeMs: s.mtimeMs,
});

type Args = Record<string, unknown>;
type Answer = { result?: unknown; body?: Buffer };
type Call = (args: Args, body: Buffer) => Promise<Answer>;

export function volumeServer(volumeDir: string, volumeId: string) {
  const files = new VolumeFiles(volumeDir);
  const handles = files.handles();
  const imports = new VolumeImportTarget(volumeDir);
  const layout = oneVolumeLayout(volumeDir, '/tmp/svc-volume-server');
  const open = new Map<number, FileHandle>();
  const reading = new Map<number, OpenedFile>();
  const pending = new Map<number, PendingFile>();
  const incoming = new Map<number, IncomingFile>();
  let next = 1;
  const keep = <T>(map: Map<number, T>, value: T) => {
    const id = next++;
    map.set(id, value);
    return id;
  };
  const held = <T>(map: Map<number, T>, id: unknown): T => {
    const value = map.get(Number(id));
    if (!value) throw new Error('unknown handle');
    return value;
  };
  const s = (v: unknown) => String(v);
  const n = (v: unknown) => Number(v);
  const done = (result?: unknown): Answer => ({ result });

  const calls: Record<string, Call> = {
    list: async (a) => done(await files.list(s(a.path))),
    stat: async (a) => done(await files.stat(s(a.path))),
    read: async (a) => done(await files.read(s(a.path))),
    write: async (a, body) =>
      done(await files.write(s(a.path), body, a.maxBytes === undefined ? {} : { maxBytes: n(a.maxBytes) })),
    mkdir: async (a) => done(await files.mkdir(s(a.path))),
    remove: async (a) => done(await files.remove(s(a.path), { recursive: a.recursive === true })),
    rename: async (a) => done(await files.rename(s(a.from), s(a.to))),
    chmod: async (a) => done(await files.chmod(s(a.path), n(a.mode))),

    'handles.openFile': async (a) => done(keep(open, await handles.openFile(s(a.path), a.mode as never))),
    'handles.listAll': async (a) =>
      done((await handles.listAll(s(a.path))).map(({ name, stats }) => ({ name, stats: wireStats(stats) }))),
    'handles.stat': async (a) => done(wireStats(await handles.stat(s(a.path)))),
    'handles.setAttributes': async (a) => done(await handles.setAttributes(s(a.path), a.attrs as never)),
    'fh.read': async (a) => {
      const buffer = Buffer.allocUnsafe(n(a.length));
      const { bytesRead } = await held(open, a.h).read(buffer, 0, buffer.length, n(a.position));
      return { body: buffer.subarray(0, bytesRead) };
    },
    'fh.write': async (a, body) =>
      done((await held(open, a.h).write(body, 0, body.length, n(a.position))).bytesWritten),
    'fh.stat': async (a) => done(wireStats(await held(open, a.h).stat())),
    'fh.truncate': async (a) => done(await held(open, a.h).truncate(n(a.length))),
    'fh.chmod': async (a) => done(await held(open, a.h).chmod(n(a.mode))),
    'fh.utimes': async (a) => done(await held(open, a.h).utimes(n(a.atime), n(a.mtime))),
    'fh.close': async (a) => {
      const file = open.get(n(a.h));
      open.delete(n(a.h));
      return done(await file?.close());
    },

    'streams.openRead': async (a) => {
      const file = await files.streams.openRead(s(a.path));
      return done({ h: keep(reading, file), entry: file.entry });
    },
    'opened.read': async (a) => {
      const buffer = Buffer.allocUnsafe(n(a.length));
      const read = await held(reading, a.h).readAt(buffer, n(a.position));
      return { body: buffer.subarray(0, read) };
    },
    'opened.close': async (a) => {
      const file = reading.get(n(a.h));
      reading.delete(n(a.h));
      return done(await file?.close());
    },
    'streams.createPending': async (a) => {
      const file = await files.streams.createPending(s(a.path));
      return done({ h: keep(pending, file), path: file.path, replacedBytes: file.replacedBytes });
    },
    'pending.writeAt': async (a, body) => done(await held(pending, a.h).writeAt(body, n(a.position))),
    'pending.commit': async (a) => {
      const file = held(pending, a.h);
      pending.delete(n(a.h));
      return done(await file.commit());
    },
    'pending.discard': async (a) => {
      const file = pending.get(n(a.h));
      pending.delete(n(a.h));
      return done(await file?.discard());
    },
    'streams.usedBytes': async () => done(await files.streams.usedBytes()),
    'streams.sweepTemporaries': async () => done(await files.streams.sweepTemporaries()),

    'import.fileInfo': async (a) => done(await imports.fileInfo(s(a.path))),
    'import.mkdir': async (a) => done(await imports.mkdir(s(a.path))),
    'import.remove': async (a) => done(await imports.remove(s(a.path))),
    'import.create': async (a) => done(keep(incoming, await imports.create(s(a.path)))),
    'incoming.write': async (a, body) => done(await held(incoming, a.h).write(body, n(a.position))),
    'incoming.commit': async (a) => {
      const file = held(incoming, a.h);
      incoming.delete(n(a.h));
      return done(await file.commit(n(a.mtimeSec)));
    },
    'incoming.abort': async (a) => {
      const file = incoming.get(n(a.h));
      incoming.delete(n(a.h));
      return done(await file?.abort());
    },
    'import.removeLeftovers': async () => done(await imports.removeLeftovers()),
    'import.tree': async () => done(await imports.tree()),

    'volume.wipe': async () => {
      for (const entry of await readdir(volumeDir))
        await rm(join(volumeDir, entry), { recursive: true, force: true });
      return done();
    },
    'machine.installImage': async (a) => done(await installImage(layout, volumeId, s(a.imageId))),
    'machine.installedImage': async () => done(await installedImage(layout, volumeId)),
    'machine.resetAccess': async (a) =>
      done(await resetMachineAccess(layout, s(a.unitId), volumeId, credentialsOf(a.credentials))),
    'machine.setAccess': async (a) =>
      done(await writeMachineAccess(layout, s(a.unitId), volumeId, credentialsOf(a.credentials))),
  };

  /** Everything held, let go (the driver hung up): pending files and imports leave nothing behind. */
  async function release(): Promise<void> {
    await Promise.all([
      ...[...open.values()].map((f) => f.close().catch(() => undefined)),
      ...[...reading.values()].map((f) => f.close().catch(() => undefined)),
      ...[...pending.values()].map((f) => f.discard().catch(() => undefined)),
      ...[...incoming.values()].map((f) => f.abort().catch(() => undefined)),
    ]);
  }

  async function answer(frame: Frame): Promise<Buffer> {
    const id = frame.header.id;
    const call = calls[String(frame.header.op)];
    try {
      if (!call) throw new Error('unknown call');
      const { result, body } = await call((frame.header.args ?? {}) as Args, frame.body);
      return encodeFrame({ id, result: result ?? null }, body);
    } catch (err) {
      return encodeFrame({ id, error: errorOf(err) });
    }
  }

  return { answer, release };
}

export function errorOf(err: unknown): Record<string, string> {
  if (err instanceof FileLayerError) return { layer: err.code, detail: err.detail };
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (typeof code === 'string' && PASSED_ERRNO.has(code)) return { errno: code };
  return {};
}

/** Exits when the volume's mount is no longer the one this server started on. */
async function watchMount(volumeDir: string): Promise<() => Promise<void>> {
  const first = await stat(volumeDir);
  return async () => {
    const now = await stat(volumeDir).catch(() => null);
    // Detached (a restore or delete by another process of the platform): the driver's next call opens
    // a new server after attaching the volume again, rather than this one answering for an empty
    // mount point.
    if (!now || now.dev !== first.dev || now.ino !== first.ino) process.exit(4);
  };
}

async function main(): Promise<void> {
  const [volumeDir, volumeId] = process.argv.slice(2);
  if (!volumeDir || !volumeId) {
    process.stderr.write('usage: volume-server VOLUME_DIR VOLUME_ID\n');
    process.exit(2);
  }
  const server = volumeServer(volumeDir, volumeId);
  const sameMount = await watchMount(volumeDir).catch(() => process.exit(4));
  const reader = new FrameReader();
  process.stdin.on('data', (chunk: Buffer) => {
    let frames: Frame[];
    try {
      frames = reader.push(chunk);
    } catch {
      process.exit(3);
    }
    for (const frame of frames)
      void sameMount()
        .then(() => server.answer(frame))
        .then((bytes) => process.stdout.write(bytes));
  });
  process.stdin.on('end', () => void server.release().finally(() => process.exit(0)));
  // A write to a driver that went away must end this process, not crash it with a stack on stderr.
  process.stdout.on('error', () => void server.release().finally(() => process.exit(0)));
}

// Bundled as its own program; imported only for its types and errorOf.
if (/\/volume-server\/main\.(mjs|ts)$/.test(process.argv[1] ?? '')) void main();
