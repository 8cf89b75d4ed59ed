// The volume server (lxd/volume-server/main.ts) and the driver's side of it (volume-client.ts,
// volume-session.ts) over real pipes: the program run here as a child process on a directory beside a
// canary, exactly as LXD runs it in a volume host (there its pipes are an exec's WebSockets). The layer's
// refusals cross with their codes and details, other errors as errno codes or a generic failure; links
// are never followed; open files, uploads and import files work through their session and are let go
// when it hangs up; a dead session is replaced once.
import { spawn, type ChildProcess } from 'node:child_process';
import { lstat, mkdir, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileLayerError } from '../../server/src/substrate/local/files/index.js';
import { checkMachineAccess } from '../../server/src/substrate/local/access.js';
import {
  RemoteImportTarget,
  RemoteVolumeFiles,
  RemoteVolumeMachine,
} from '../../server/src/substrate/lxd/volume-client.js';
import {
  VolumeSession,
  VolumeSessions,
  type ServerPipe,
} from '../../server/src/substrate/lxd/volume-session.js';
import { makeSandbox, SECRET, type Sandbox } from '../files/canary.js';
import { passwordAccess } from '../support/machine-access.js';

const SERVER = fileURLToPath(
  new URL('../../server/src/substrate/lxd/volume-server/main.ts', import.meta.url),
);
const VOLUME_ID = 'vol-1';

const children: ChildProcess[] = [];
function childPipe(dir: string): ServerPipe & { child: ChildProcess } {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER, dir, VOLUME_ID], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.push(child);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    child,
    get writable() {
      return child.stdin!.writable;
    },
    send: (bytes, done) => void child.stdin!.write(bytes, done),
    onData: (listener) => void child.stdout!.on('data', listener),
    onEnd(listener) {
      child.stdout!.once('end', listener);
      void exited.then(listener);
    },
    hangUp(graceMs) {
      child.stdin!.end();
      setTimeout(() => child.kill('SIGKILL'), graceMs).unref();
    },
    exited,
  };
}

const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'ok';
  } catch (err) {
    if (err instanceof FileLayerError) return [err.code, err.detail];
    return [(err as NodeJS.ErrnoException).code ?? null, (err as Error).message];
  }
};

let box: Sandbox;
let opened: number;
let sessions: VolumeSessions;
let pipes: (ServerPipe & { child: ChildProcess })[];
beforeEach(async () => {
  box = await makeSandbox();
  opened = 0;
  pipes = [];
  sessions = new VolumeSessions(async () => {
    opened += 1;
    const pipe = childPipe(box.volume);
    pipes.push(pipe);
    return new VolumeSession(pipe);
  });
});
afterEach(async () => {
  await sessions.closeAll();
  await box.intact();
  await box.cleanup();
});
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

describe('the volume server over pipes', () => {
  it("answers the file layer's calls; its refusals cross with their codes and details", async () => {
    const files = new RemoteVolumeFiles(sessions, VOLUME_ID);
    expect(await files.write('/a/b.txt', 'hello\n')).toMatchObject({
      kind: 'file',
      path: '/a/b.txt',
      size_bytes: 6,
    });
    expect(await files.read('/a/b.txt')).toEqual({ path: '/a/b.txt', content: 'hello\n', size_bytes: 6 });
    expect((await files.list('/a')).entries.map((e) => e.name)).toEqual(['b.txt']);
    await files.mkdir('/c/d');
    await files.rename('/a/b.txt', '/c/d/e.txt');
    await files.chmod('/c/d/e.txt', 0o600);
    expect((await lstat(join(box.volume, 'c/d/e.txt'))).mode & 0o777).toBe(0o600);
    expect(await files.stat('/c/d/e.txt')).toMatchObject({ kind: 'file', size_bytes: 6 });
    // Thunks: a call made before the one ahead of it is awaited would reject with no handler yet.
    const table: [string, () => Promise<unknown>, unknown][] = [
      ['absent', () => files.read('/nope'), ['not-found', '/nope does not exist.']],
      ['..', () => files.read('/a/../../x'), ['invalid-path', 'The path may not contain "..".']],
      ['/proc', () => files.list('/proc'), ['invalid-path', 'Paths under /proc are refused.']],
      [
        'not empty',
        () => files.remove('/c'),
        ['directory-not-empty', '/c is not empty; delete it with recursive.'],
      ],
      ['root', () => files.remove('/'), ['mount-root', 'The root of the volume cannot be deleted or moved.']],
      [
        'too large',
        () => files.write('/big', Buffer.alloc(1024 * 1024 + 1)),
        ['file-too-large', '/big is larger than 1048576 bytes.'],
      ],
    ];
    for (const [name, call, want] of table) expect([name, await codeOf(call())]).toEqual([name, want]);
    await files.remove('/c', { recursive: true });
    expect(await readdir(box.volume)).toEqual(['a']);
    // Concurrent calls share one session, each answered under its own id.
    await Promise.all(Array.from({ length: 20 }, (_, i) => files.write(`/a/${i}.txt`, String(i))));
    const reads = await Promise.all(Array.from({ length: 20 }, (_, i) => files.read(`/a/${i}.txt`)));
    expect(reads.map((r) => r.content)).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
    expect(opened).toBe(1);
  });

  it('never follows a link in the volume: read absent, listed never, replaced by a write, removed itself', async () => {
    await symlink(box.outsideFile, join(box.volume, 'link.txt'));
    await symlink(box.outside, join(box.volume, 'dirlink'));
    const files = new RemoteVolumeFiles(sessions, VOLUME_ID);
    expect(await codeOf(files.read('/link.txt'))).toEqual(['not-found', '/link.txt does not exist.']);
    expect(await codeOf(files.read('/dirlink/secret.txt'))).toEqual([
      'not-found',
      '/dirlink/secret.txt does not exist.',
    ]);
    expect((await files.list('/')).entries).toEqual([]);
    expect(await codeOf(files.streams.openRead('/link.txt'))).toEqual([
      'not-found',
      '/link.txt does not exist.',
    ]);
    expect(
      await codeOf(files.handles().openFile('/dirlink/secret.txt', { read: true, write: true })),
    ).toEqual(['not-found', '/dirlink/secret.txt does not exist.']);
    await files.write('/link.txt', 'mine');
    expect((await lstat(join(box.volume, 'link.txt'))).isFile()).toBe(true);
    await files.remove('/dirlink', { recursive: true });
    expect(await readdir(box.volume)).toEqual(['link.txt']);
    expect(await readFile(box.outsideFile, 'utf8')).toBe(SECRET);
  });

  it("SFTP's handles: an open file read, written, stat'ed and closed; listings with stats; attributes", async () => {
    const handles = new RemoteVolumeFiles(sessions, VOLUME_ID).handles();
    const file = await handles.openFile('/f.bin', {
      read: true,
      write: true,
      create: true,
      createMode: 0o640,
    });
    expect(await file.write(Buffer.from('xxhello'), 2, 5, 10)).toEqual({ bytesWritten: 5 });
    const buffer = Buffer.alloc(20);
    expect(await file.read(buffer, 1, 20, 10)).toEqual({ bytesRead: 5 });
    expect(buffer.subarray(1, 6).toString()).toBe('hello');
    const stats = await file.stat();
    expect([stats.size, stats.isFile(), stats.isDirectory(), stats.mode & 0o777]).toEqual([
      15,
      true,
      false,
      0o640 & ~process.umask(),
    ]);
    await file.truncate(3);
    await file.utimes(1_000_000, 2_000_000);
    await file.close();
    expect((await handles.stat('/f.bin')).mtime.getTime()).toBe(2_000_000_000);
    await handles.setAttributes('/f.bin', { mode: 0o600, mtime: new Date(3_000_000_000) });
    const [entry] = await handles.listAll('/');
    expect([entry!.name, entry!.stats.size, entry!.stats.mode & 0o777, entry!.stats.mtimeMs]).toEqual([
      'f.bin',
      3,
      0o600,
      3_000_000_000,
    ]);
    // A system error crosses as its errno code alone: SFTP answers by it.
    expect(
      await codeOf(handles.openFile('/f.bin', { read: true, write: true, create: true, exclusive: true })),
    ).toEqual(['EEXIST', 'volume server: EEXIST']);
  });

  it("the gateway's streams and an import's files: written in pieces, put in place whole, let go on hang-up", async () => {
    const files = new RemoteVolumeFiles(sessions, VOLUME_ID);
    const pending = await files.streams.createPending('/up.bin');
    await pending.writeAt(Buffer.alloc(3 * 1024 * 1024, 1), 0);
    await pending.writeAt(Buffer.from('end'), 3 * 1024 * 1024);
    expect(await readdir(box.volume)).toEqual([expect.stringMatching(/^\.svc-upload-/)]);
    expect(await pending.commit()).toMatchObject({ path: '/up.bin', size_bytes: 3 * 1024 * 1024 + 3 });
    const read = await files.streams.openRead('/up.bin');
    const tail = Buffer.alloc(10);
    expect(await read.readAt(tail, 3 * 1024 * 1024 - 2)).toBe(5);
    expect(tail.subarray(0, 5)).toEqual(Buffer.from([1, 1, 0x65, 0x6e, 0x64]));
    await read.close();
    expect(await files.streams.usedBytes()).toBe(3 * 1024 * 1024 + 3);

    const target = new RemoteImportTarget(sessions, VOLUME_ID);
    const incoming = await target.create('/in/world.dat');
    await incoming.write(Buffer.from('world'), 0);
    await incoming.commit(1_600_000_000);
    expect(await target.fileInfo('/in/world.dat')).toEqual({ size: 5, mtimeSec: 1_600_000_000 });
    expect(await target.tree()).toEqual(
      expect.arrayContaining([
        { path: '/in/world.dat', kind: 'file' },
        { path: '/in', kind: 'directory' },
      ]),
    );
    // Held open when the session hangs up: the server discards them, nothing half-written stays.
    const left = await target.create('/in/half.dat');
    await left.write(Buffer.from('half'), 0);
    const upload = await files.streams.createPending('/half-upload');
    await upload.writeAt(Buffer.from('half'), 0);
    expect((await readdir(join(box.volume, 'in'))).length).toBe(2);
    await sessions.closeAll();
    expect((await readdir(join(box.volume, 'in'))).sort()).toEqual(['world.dat']);
    expect((await readdir(box.volume)).sort()).toEqual(['in', 'up.bin']);
    await expect(left.write(Buffer.from('more'), 4)).rejects.toThrow('the volume server is gone');
  });

  it('installs a machine image and resets its access on the volume', async () => {
    const machine = new RemoteVolumeMachine(sessions, VOLUME_ID);
    expect(await machine.installedImage()).toBeNull();
    await machine.installImage('debian-12');
    expect(await machine.installedImage()).toBe('debian-12');
    expect(await readFile(join(box.volume, 'rootfs/etc/os-release'), 'utf8')).toContain('Debian GNU/Linux');
    await mkdir(join(box.volume, 'rootfs/root/.ssh'), { recursive: true });
    await writeFile(join(box.volume, 'rootfs/root/.ssh/authorized_keys'), 'old key');
    const access = await passwordAccess();
    await machine.resetAccess('unit-1', access.credentials);
    expect(await checkMachineAccess(box.volume, 'root', access.password)).toBe(true);
    expect(await readdir(join(box.volume, 'rootfs/root'))).toEqual(['.ssh']);
    expect(await readFile(join(box.volume, 'rootfs/root/.ssh/authorized_keys'), 'utf8')).toBe('');
    await machine.setAccess('unit-1', { authorizedKeys: ['ssh-ed25519 AAAAnew'], password: null });
    expect(await checkMachineAccess(box.volume, 'root', access.password)).toBe(false);
    expect(await readFile(join(box.volume, 'rootfs/root/.ssh/authorized_keys'), 'utf8')).toBe('ssh-ed25519 AAAAnew\n');
  });

  it('answers an unknown call with a generic failure, and replaces a session that died once', async () => {
    const session = await sessions.get(VOLUME_ID);
    expect(await codeOf(session.call('no-such-call'))).toEqual([
      null,
      'the volume server could not complete the call',
    ]);
    const files = new RemoteVolumeFiles(sessions, VOLUME_ID);
    await files.write('/x', 'x');
    pipes[0]!.child.kill('SIGKILL');
    await pipes[0]!.exited;
    expect(await files.read('/x')).toMatchObject({ content: 'x' });
    expect(opened).toBe(2);
  });

  it('ends when its volume is no longer the directory it started on (detached); the call goes to a new server', async () => {
    const files = new RemoteVolumeFiles(sessions, VOLUME_ID);
    await files.write('/x', 'before');
    await rename(box.volume, `${box.volume}-detached`);
    await mkdir(box.volume);
    await writeFile(join(box.volume, 'x'), 'attached again');
    expect(await files.read('/x')).toMatchObject({ content: 'attached again' });
    expect(opened).toBe(2);
    await rm(`${box.volume}-detached`, { recursive: true, force: true });
  });
});
