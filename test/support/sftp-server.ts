// SFTP servers for import tests, both real: ssh2's Server speaking the SFTP protocol over a directory of
// the test's (read-only: what an import needs), and OpenSSH's sshd with internal-sftp chrooted to a
// directory, for a user made in /etc/passwd for the purpose (PEERS.md "SFTP server").
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, chown, lstat, mkdir, open, readdir, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { ed25519KeyPair } from '../../server/src/ssh/ed25519.js';

const { Server, utils } = ssh2;
const { STATUS_CODE, OPEN_MODE } = utils.sftp;

export interface TestSftp {
  port: number;
  username: string;
  password: string;
  /** The served directory on this machine. */
  root: string;
  /** The path an import names to copy `root` (the account's view of it). */
  remotePath: string;
  /** ssh2's server only: each read answered this much later (a slow link, to cancel or kill mid-copy). */
  readDelayMs: number;
  close(): Promise<void>;
}

export interface Ssh2Sftp extends TestSftp {
  /** Stops listening (connections to the port are refused) or listens on it again. */
  setListening(on: boolean): Promise<void>;
}

const attrsOf = (s: Awaited<ReturnType<typeof lstat>>) => ({
  mode: Number(s.mode),
  uid: Number(s.uid),
  gid: Number(s.gid),
  size: Number(s.size),
  atime: Math.floor(Number(s.atimeMs) / 1000),
  mtime: Math.floor(Number(s.mtimeMs) / 1000),
});

/** ssh2's Server on a loopback port, serving `root` as `/`. */
export async function startSsh2Sftp(root: string): Promise<Ssh2Sftp> {
  const served = { readDelayMs: 0 };
  const username = 'importer';
  const password = randomBytes(12).toString('base64url');
  const hostKey = ed25519KeyPair().private;
  const server = new Server({ hostKeys: [hostKey] }, (client) => {
    client.on('authentication', (ctx) => {
      const ok =
        ctx.method === 'password' &&
        ctx.username === username &&
        ctx.password.length === password.length &&
        timingSafeEqual(Buffer.from(ctx.password), Buffer.from(password));
      if (ok) ctx.accept();
      else ctx.reject(['password']);
    });
    client.on('error', () => undefined);
    client.on('ready', () => {
      client.on('session', (accept) => {
        accept().on('sftp', (acceptSftp) => serveSftp(acceptSftp(), root, served));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    username,
    password,
    root,
    remotePath: '/',
    get readDelayMs() {
      return served.readDelayMs;
    },
    set readDelayMs(ms: number) {
      served.readDelayMs = ms;
    },
    setListening: (on) =>
      new Promise<void>((resolve, reject) => {
        if (on) server.once('error', reject).listen(port, '127.0.0.1', () => resolve());
        else server.close(() => resolve());
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function serveSftp(sftp: ssh2.SFTPWrapper, root: string, served: { readDelayMs: number }): void {
  const files = new Map<number, FileHandle>();
  const dirs = new Map<number, { path: string; done: boolean }>();
  let nextHandle = 1;
  const local = (p: string) =>
    join(
      root,
      p
        .replace(/^\/+/, '')
        .split('/')
        .filter((x) => x !== '..')
        .join('/'),
    );
  const handleOf = (buf: Buffer) => (buf.length === 4 ? buf.readUInt32BE(0) : -1);
  const newHandle = () => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(nextHandle);
    return { id: nextHandle++, buf: b };
  };
  const normal = (p: string) => {
    const parts: string[] = [];
    for (const part of p.split('/')) {
      if (part === '' || part === '.') continue;
      if (part === '..') parts.pop();
      else parts.push(part);
    }
    return `/${parts.join('/')}`;
  };
  sftp.on('REALPATH', (id, path) => {
    const p = normal(path);
    sftp.name(id, [{ filename: p, longname: p, attrs: {} as never }]);
  });
  const stat = async (id: number, path: string) => {
    try {
      sftp.attrs(id, attrsOf(await lstat(local(path))));
    } catch {
      sftp.status(id, STATUS_CODE.NO_SUCH_FILE);
    }
  };
  sftp.on('STAT', (id, path) => void stat(id, path));
  sftp.on('LSTAT', (id, path) => void stat(id, path));
  sftp.on('OPENDIR', async (id, path) => {
    try {
      if (!(await lstat(local(path))).isDirectory()) throw new Error('not a directory');
      const h = newHandle();
      dirs.set(h.id, { path, done: false });
      sftp.handle(id, h.buf);
    } catch {
      sftp.status(id, STATUS_CODE.NO_SUCH_FILE);
    }
  });
  sftp.on('READDIR', async (id, handle) => {
    const dir = dirs.get(handleOf(handle));
    if (!dir) return sftp.status(id, STATUS_CODE.FAILURE);
    if (dir.done) return sftp.status(id, STATUS_CODE.EOF);
    dir.done = true;
    const names = await readdir(local(dir.path));
    const entries = [];
    for (const filename of names) {
      const s = await lstat(join(local(dir.path), filename));
      entries.push({ filename, longname: filename, attrs: attrsOf(s) });
    }
    sftp.name(id, entries);
  });
  sftp.on('OPEN', async (id, path, flags) => {
    if (flags & (OPEN_MODE.WRITE | OPEN_MODE.CREAT)) return sftp.status(id, STATUS_CODE.PERMISSION_DENIED);
    try {
      const file = await open(local(path), constants.O_RDONLY | constants.O_NOFOLLOW);
      const h = newHandle();
      files.set(h.id, file);
      sftp.handle(id, h.buf);
    } catch {
      sftp.status(id, STATUS_CODE.NO_SUCH_FILE);
    }
  });
  sftp.on('READ', async (id, handle, offset, length) => {
    const file = files.get(handleOf(handle));
    if (!file) return sftp.status(id, STATUS_CODE.FAILURE);
    if (served.readDelayMs > 0) await new Promise((r) => setTimeout(r, served.readDelayMs));
    const buf = Buffer.alloc(Math.min(length, 64 * 1024));
    const { bytesRead } = await file.read(buf, 0, buf.length, offset);
    if (bytesRead === 0) return sftp.status(id, STATUS_CODE.EOF);
    sftp.data(id, buf.subarray(0, bytesRead));
  });
  sftp.on('FSTAT', async (id, handle) => {
    const file = files.get(handleOf(handle));
    if (!file) return sftp.status(id, STATUS_CODE.FAILURE);
    sftp.attrs(id, attrsOf(await file.stat()));
  });
  sftp.on('CLOSE', async (id, handle) => {
    const h = handleOf(handle);
    await files.get(h)?.close();
    files.delete(h);
    dirs.delete(h);
    sftp.status(id, STATUS_CODE.OK);
  });
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const SSHD_USER = 'svcimporttest';

/**
 * OpenSSH's sshd (internal-sftp, chrooted) on a loopback port. Needs root: the user is added to
 * /etc/passwd once (no shell, no home of its own) and given a new password each run; the chroot is a
 * root-owned directory under /srv (sshd refuses one under a world-writable /tmp); the account sees the
 * served tree as /data.
 */
export async function startOpenSshSftp(options: { authorizedKey?: string } = {}): Promise<TestSftp> {
  if (spawnSync('id', [SSHD_USER]).status !== 0) {
    const made = spawnSync('useradd', [
      '--no-create-home',
      '--home-dir',
      '/',
      '--shell',
      '/usr/sbin/nologin',
      SSHD_USER,
    ]);
    if (made.status !== 0) throw new Error(`useradd failed: ${made.stderr.toString()}`);
  }
  const password = randomBytes(12).toString('base64url');
  const set = spawnSync('chpasswd', [], { input: `${SSHD_USER}:${password}\n` });
  if (set.status !== 0) throw new Error(`chpasswd failed: ${set.stderr.toString()}`);
  const uid = Number(spawnSync('id', ['-u', SSHD_USER]).stdout.toString().trim());
  const base = join('/srv', `svc-import-test-${randomBytes(6).toString('hex')}`);
  const chrootDir = join(base, 'chroot');
  const root = join(chrootDir, 'data');
  await mkdir(root, { recursive: true, mode: 0o755 });
  await chmod(base, 0o755);
  await chmod(chrootDir, 0o755);
  await chown(root, uid, uid);
  await mkdir('/run/sshd', { recursive: true });
  // A key as well as the password, for OpenSSH's own sftp client (the import benchmark's baseline).
  const keys = join(base, 'authorized_keys');
  if (options.authorizedKey) await writeFile(keys, `${options.authorizedKey}\n`, { mode: 0o644 });
  const hostKey = join(base, 'host_ed25519');
  spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
  const port = await freePort();
  const config = join(base, 'sshd_config');
  await writeFile(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `PidFile ${join(base, 'sshd.pid')}`,
      'UsePAM no',
      'PasswordAuthentication yes',
      'KbdInteractiveAuthentication no',
      `PubkeyAuthentication ${options.authorizedKey ? 'yes' : 'no'}`,
      `AuthorizedKeysFile ${keys}`,
      'StrictModes no',
      'PermitRootLogin no',
      `AllowUsers ${SSHD_USER}`,
      'Subsystem sftp internal-sftp',
      `Match User ${SSHD_USER}`,
      `  ChrootDirectory ${chrootDir}`,
      '  ForceCommand internal-sftp',
      '  AllowTcpForwarding no',
      '',
    ].join('\n'),
  );
  const sshd: ChildProcess = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', config], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  sshd.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error(`sshd did not start: ${log}`)), 10_000);
    const check = () => {
      if (log.includes('Server listening')) {
        clearTimeout(deadline);
        resolve();
      } else if (sshd.exitCode !== null) {
        clearTimeout(deadline);
        reject(new Error(`sshd exited: ${log}`));
      } else setTimeout(check, 20);
    };
    check();
  });
  return {
    port,
    username: SSHD_USER,
    password,
    root,
    remotePath: '/data',
    readDelayMs: 0,
    async close() {
      sshd.kill('SIGTERM');
      await new Promise((resolve) => (sshd.exitCode !== null ? resolve(null) : sshd.once('exit', resolve)));
      await rm(base, { recursive: true, force: true });
    },
  };
}
