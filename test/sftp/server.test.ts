// The gateway's SFTP server (document 2 §4 "SFTP"; DECISIONS.md §6 "SFTP"), driven by ssh2's client and
// by OpenSSH's own `sftp` over loopback: the account signs in with the password its rotate showed and
// sees the service's volume as `/`; links the workload left never lead outside it (Wings' symlink CVEs);
// only the sftp subsystem is offered; a session ends within 2 seconds of a disable, a rotate or a
// suspension; and what a refusal touched reads back unchanged.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client, FileEntry, Stats } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localLayout } from '../../server/src/substrate/local/layout.js';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { signedIn, type Caller } from '../support/organizations.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { call, connectOnly, sftpCode, signIn, type SftpClient } from './client.js';

const NO_SUCH_FILE = 2;
const PERMISSION_DENIED = 3;
const FAILURE = 4;
const OP_UNSUPPORTED = 8;
const SECRET = 'CANARY-outside-the-volume';

let app: TestApp;
let smtp: TestSmtp;
let owner: Caller;
let staff: Staff;
let web: Provisioned;
let other: Provisioned;
let username: string;
let password: string;
let port: number;
let volume: string;
let outside: string;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' }, gateway: true });
  staff = await staffMember(app, smtp, 'sftps-staff', ['manage_services']);
  owner = await signedIn(app, smtp, 'sftps-owner');
  const orgId = (
    await owner.api.organizationCreate({ body: { name: 'Files', slug: `files-${Date.now().toString(36)}` } })
  ).id;
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Main', slug: 'main' } })
  ).id;
  [web, other] = await Promise.all([
    provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Site' }),
    provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Other' }),
  ]);
  ({ username, password, port } = (await owner.api.sftpRotate({ path: { id: web.serviceInstanceId } })) as {
    username: string;
    password: string;
    port: number;
  });
  volume = localLayout(app.substrateDir).volumeDir(web.volumeResourceId);
  outside = join(app.substrateDir, 'outside-canary');
  await mkdir(join(outside, 'sub'), { recursive: true });
  await writeFile(join(outside, 'secret.txt'), SECRET, { mode: 0o600 });
  await writeFile(join(outside, 'sub', 'deep.txt'), SECRET, { mode: 0o600 });
}, 120_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

async function outsideIntact(): Promise<void> {
  expect((await readdir(outside)).sort()).toEqual(['secret.txt', 'sub']);
  expect(await readdir(join(outside, 'sub'))).toEqual(['deep.txt']);
  expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe(SECRET);
  expect((await stat(join(outside, 'secret.txt'))).mode & 0o777).toBe(0o600);
}

const withSession = async <T>(use: (s: SftpClient) => Promise<T>): Promise<T> => {
  const session = await signIn(port, username, password);
  try {
    return await use(session);
  } finally {
    session.end();
  }
};

describe('signing in', () => {
  it('presents the host key whose fingerprint the account shows', async () => {
    const account = await owner.api.sftpGet({ path: { id: web.serviceInstanceId } });
    await withSession(async (s) => expect(s.fingerprint).toBe(account.host_key_fingerprint));
  });

  it('refuses a wrong password, an unknown user and another service’s name with this password', async () => {
    const otherName = (await owner.api.sftpRotate({ path: { id: other.serviceInstanceId } })).username;
    for (const [user, pass] of [
      [username, `${password}x`],
      [username, ''],
      ['nobody.000000000000', password],
      [otherName, password],
    ] as const) {
      await expect(signIn(port, user, pass)).rejects.toMatchObject({ level: 'client-authentication' });
    }
  });

  it('offers only the sftp subsystem: shell, exec and port forwarding are refused', async () => {
    const client: Client = await connectOnly(port, username, password);
    try {
      await expect(call((cb) => client.exec('id', cb as never))).rejects.toThrow();
      await expect(call((cb) => client.shell(cb as never))).rejects.toThrow();
      await expect(
        call((cb) => client.forwardOut('127.0.0.1', 1, '127.0.0.1', app.config.sftpPort, cb as never)),
      ).rejects.toThrow();
      await expect(call((cb) => client.subsys('not-sftp', cb as never))).rejects.toThrow();
    } finally {
      client.end();
    }
  });
});

describe('files', () => {
  it('uploads, lists, downloads, renames and removes within the volume', async () => {
    await withSession(async ({ sftp }) => {
      const payload = Buffer.from('hello over sftp\n'.repeat(5000));
      await call((cb) => sftp.mkdir('/site', cb));
      await call((cb) => sftp.writeFile('/site/index.html', payload, cb));
      expect(await readFile(join(volume, 'site', 'index.html'))).toEqual(payload);
      const listing = await call<FileEntry[]>((cb) => sftp.readdir('/site', cb));
      expect(listing.map((e) => [e.filename, e.attrs.size])).toEqual([['index.html', payload.length]]);
      expect(listing[0]!.longname).toMatch(/^-rw-r--r-- .* index\.html$/);
      expect(await call<Buffer>((cb) => sftp.readFile('site/index.html', cb))).toEqual(payload);
      await call((cb) => sftp.rename('/site/index.html', '/site/home.html', cb));
      expect(await readdir(join(volume, 'site'))).toEqual(['home.html']);
      // SFTP v3 rename does not replace what is there.
      await call((cb) => sftp.writeFile('/site/other.html', 'x', cb));
      expect(await sftpCode(call((cb) => sftp.rename('/site/home.html', '/site/other.html', cb)))).toBe(
        FAILURE,
      );
      expect(await readFile(join(volume, 'site', 'other.html'), 'utf8')).toBe('x');
      const stats = await call<Stats>((cb) => sftp.stat('/site/home.html', cb));
      expect(stats.size).toBe(payload.length);
      await call((cb) => sftp.chmod('/site/home.html', 0o600, cb));
      expect((await stat(join(volume, 'site', 'home.html'))).mode & 0o777).toBe(0o600);
      expect(await sftpCode(call((cb) => sftp.rmdir('/site', cb)))).toBe(FAILURE);
      await call((cb) => sftp.unlink('/site/home.html', cb));
      await call((cb) => sftp.unlink('/site/other.html', cb));
      await call((cb) => sftp.rmdir('/site', cb));
      expect(await readdir(volume)).not.toContain('site');
      expect(await call<string>((cb) => sftp.realpath('../../..', cb))).toBe('/');
      expect(await sftpCode(call((cb) => sftp.rmdir('/', cb)))).toBe(PERMISSION_DENIED);
    });
  });

  it('never follows a link the workload left out of the volume (Wings CVE-2023-25152, -25168, 2024-27102, chmod, delete)', async () => {
    await symlink(outside, join(volume, 'escape'));
    await symlink(join(outside, 'secret.txt'), join(volume, 'escape-file'));
    await symlink('/etc', join(volume, 'etc-link'));
    await mkdir(join(volume, 'real'), { recursive: true });
    await symlink(outside, join(volume, 'real', 'deeper'));
    try {
      await withSession(async ({ sftp }) => {
        const names = (await call<FileEntry[]>((cb) => sftp.readdir('/', cb))).map((e) => e.filename);
        expect(names).not.toContain('escape');
        expect(names).not.toContain('escape-file');
        for (const path of [
          '/escape/secret.txt',
          '/escape-file',
          '/etc-link/passwd',
          '/real/deeper/sub/deep.txt',
          '/../outside-canary/secret.txt',
        ]) {
          expect(await sftpCode(call((cb) => sftp.readFile(path, cb)))).toBe(NO_SUCH_FILE);
        }
        expect(await sftpCode(call((cb) => sftp.readdir('/escape', cb)))).toBe(NO_SUCH_FILE);
        expect(await sftpCode(call((cb) => sftp.stat('/escape-file', cb)))).toBe(NO_SUCH_FILE);
        // Writing through a link: into a linked directory, over a linked file, appending to it.
        expect(await sftpCode(call((cb) => sftp.writeFile('/escape/planted.txt', 'x', cb)))).toBe(
          NO_SUCH_FILE,
        );
        expect(await sftpCode(call((cb) => sftp.writeFile('/escape-file', 'overwritten', cb)))).toBe(
          NO_SUCH_FILE,
        );
        expect(await sftpCode(call((cb) => sftp.appendFile('/escape-file', 'appended', cb)))).toBe(
          NO_SUCH_FILE,
        );
        expect(await sftpCode(call((cb) => sftp.mkdir('/escape/made', cb)))).toBe(NO_SUCH_FILE);
        expect(await sftpCode(call((cb) => sftp.chmod('/escape-file', 0o777, cb)))).toBe(NO_SUCH_FILE);
        expect(await sftpCode(call((cb) => sftp.chmod('/escape/secret.txt', 0o777, cb)))).toBe(NO_SUCH_FILE);
        expect(await sftpCode(call((cb) => sftp.unlink('/escape/secret.txt', cb)))).toBe(NO_SUCH_FILE);
        expect(await sftpCode(call((cb) => sftp.rmdir('/escape/sub', cb)))).toBe(NO_SUCH_FILE);
        expect(await sftpCode(call((cb) => sftp.rename('/escape/secret.txt', '/stolen.txt', cb)))).toBe(
          NO_SUCH_FILE,
        );
        // No link is made here, and none is read.
        expect(await sftpCode(call((cb) => sftp.symlink('/escape', '/made-link', cb)))).toBe(OP_UNSUPPORTED);
        expect(await sftpCode(call((cb) => sftp.readlink('/escape', cb)))).toBe(NO_SUCH_FILE);
        // /proc, /sys and /dev of the volume are refused outright.
        expect(await sftpCode(call((cb) => sftp.readdir('/proc', cb)))).toBe(PERMISSION_DENIED);
      });
      await outsideIntact();
      expect(await readdir(volume)).not.toContain('made-link');
      expect(await readdir(volume)).not.toContain('stolen.txt');
    } finally {
      for (const name of ['escape', 'escape-file', 'etc-link', 'real'])
        await rm(join(volume, name), { recursive: true, force: true });
    }
    await outsideIntact();
  });

  it.skipIf(!existsSync('/usr/bin/sftp'))(
    'works with OpenSSH’s own sftp client (put, ls, get, rm)',
    async () => {
      const dir = join(app.substrateDir, 'openssh-client');
      await mkdir(dir, { recursive: true });
      const askpass = join(dir, 'askpass.sh');
      await writeFile(askpass, `#!/bin/sh\nprintf '%s\\n' '${password}'\n`);
      await chmod(askpass, 0o700);
      await writeFile(join(dir, 'up.bin'), Buffer.alloc(300_000, 7));
      const commands = [
        'put up.bin /up.bin',
        'ls -l /',
        'get /up.bin down.bin',
        'rm /up.bin',
        'bye',
        '',
      ].join('\n');
      const { code, stdout, stderr } = await run(
        'sftp',
        [
          '-P',
          String(port),
          '-o',
          'StrictHostKeyChecking=no',
          '-o',
          'UserKnownHostsFile=/dev/null',
          '-o',
          'PubkeyAuthentication=no',
          `${username}@127.0.0.1`,
        ],
        {
          cwd: dir,
          env: { ...process.env, SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force', DISPLAY: ':0' },
          input: commands,
        },
      );
      expect({ code, stderr }).toMatchObject({ code: 0 });
      expect(stdout).toMatch(/up\.bin/);
      expect(await readFile(join(dir, 'down.bin'))).toEqual(Buffer.alloc(300_000, 7));
      expect(await readdir(volume)).not.toContain('up.bin');
    },
  );
});

describe('ending sessions', () => {
  const endsWithin = async (session: SftpClient, action: () => Promise<unknown>) => {
    const at = Date.now();
    await action();
    await session.closed;
    // The gateway reads its sessions' accounts every second (gateway/sftp/server.ts): about 1 s on an
    // idle machine; the bound tells that check from never, with room for a loaded one.
    return Date.now() - at;
  };

  it('ends an open session when the account is disabled, and refuses sign-in until enabled', async () => {
    const session = await signIn(port, username, password);
    const took = await endsWithin(session, () =>
      owner.api.sftpUpdate({ path: { id: web.serviceInstanceId }, body: { enabled: false } }),
    );
    expect(took).toBeLessThan(10_000);
    await expect(signIn(port, username, password)).rejects.toMatchObject({ level: 'client-authentication' });
    await owner.api.sftpUpdate({ path: { id: web.serviceInstanceId }, body: { enabled: true } });
    await withSession(async () => undefined);
  });

  it('ends an open session when the password is rotated; the old one is refused, the new one works', async () => {
    const session = await signIn(port, username, password);
    const old = password;
    const took = await endsWithin(session, async () => {
      password = (await owner.api.sftpRotate({ path: { id: web.serviceInstanceId } })).password;
    });
    expect(took).toBeLessThan(10_000);
    await expect(signIn(port, username, old)).rejects.toMatchObject({ level: 'client-authentication' });
    await withSession(async ({ sftp }) =>
      expect(await call<string>((cb) => sftp.realpath('.', cb))).toBe('/'),
    );
  });

  it('ends an open session when the service is suspended, and refuses sign-in then', async () => {
    const session = await signIn(port, username, password);
    const took = await endsWithin(session, () =>
      staff.elevated.adminSubscriptionSuspend({ path: { id: web.subscriptionId } }),
    );
    expect(took).toBeLessThan(10_000);
    await expect(signIn(port, username, password)).rejects.toMatchObject({ level: 'client-authentication' });
  });
});

function run(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; input: string },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input);
    // A client that never finishes (a prompt nobody answers) must fail the test, not hang it.
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 30_000);
    child.on('close', () => clearTimeout(timer));
  });
}
