// Server imports (document 2 §2 "Server import", §3, §4 "Server imports"; DECISIONS.md §6 "Imports"), end
// to end on the local substrate against two real SFTP servers: ssh2's Server and OpenSSH's sshd
// (internal-sftp, chrooted). The copy lands whole with the remote's times; a second import skips what is
// complete and deletes what is extraneous; the host is resolved once through DNS_SERVERS and the checked
// address connected to; every refusal reads back nothing changed; a wrong password fails the import with
// its password erased; cancel keeps what was copied.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { components } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { startTestDns, type TestDns } from '../support/dns.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { awaitOperation, provisionService, type Provisioned } from '../support/services.js';
import { startOpenSshSftp, startSsh2Sftp, type TestSftp } from '../support/sftp-server.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

type Import = components['schemas']['Import'];

let app: TestApp;
let smtp: TestSmtp;
let dns: TestDns;
let staff: Staff;
let owner: Caller;
let billing: Caller;
let orgId: string;
let projectId: string;
let site: Provisioned;
let other: Provisioned;
let ssh2Sftp: TestSftp;
let openssh: TestSftp;
const remoteDir = join(process.cwd(), '.tmp', `imports-remote-${randomBytes(4).toString('hex')}`);
const BIG = 3 * 1024 * 1024 + 17;
const bigContent = randomBytes(BIG);

beforeAll(async () => {
  smtp = await startTestSmtp();
  dns = await startTestDns();
  app = await startTestApp({
    env: {
      SMTP_URL: smtp.url,
      SOURCE_RATE_LIMIT_SCALE: '1000',
      DNS_SERVERS: dns.server,
      // Loopback's first address only: 127.0.0.2 stays a refused loopback address.
      IMPORT_ALLOWED_NETWORKS: '127.0.0.1/32',
    },
  });
  app.clock.set(new Date());
  staff = await staffMember(app, smtp, 'im-staff', ['manage_services']);
  [owner, billing] = await Promise.all([signedIn(app, smtp, 'im-owner'), signedIn(app, smtp, 'im-billing')]);
  orgId = (
    await owner.api.organizationCreate({
      body: { name: 'Imports', slug: `imports-${Date.now().toString(36)}` },
    })
  ).id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: billing.userId, role: 'billing' } });
  projectId = (await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Sites', slug: 'sites' } }))
    .id;
  [site, other] = await Promise.all([
    provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Shop' }),
    provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Blog' }),
  ]);
  await power(site, 'stop');

  await mkdir(join(remoteDir, 'site/assets/img'), { recursive: true });
  await writeFile(join(remoteDir, 'site/index.html'), '<h1>imported</h1>');
  await writeFile(join(remoteDir, 'site/assets/app.js'), 'console.log(1)');
  await writeFile(join(remoteDir, 'site/assets/img/big.bin'), bigContent);
  await writeFile(join(remoteDir, 'site/empty.txt'), '');
  await mkdir(join(remoteDir, 'site/empty-dir'));
  await utimes(join(remoteDir, 'site/index.html'), 1_600_000_000, 1_600_000_000);
  // Written long before any import: a later import may trust its size and time (not racily clean).
  await utimes(join(remoteDir, 'site/assets/img/big.bin'), 1_650_000_000, 1_650_000_000);
  // A link on the remote is not followed: it would have led outside the copied tree.
  await writeFile(join(remoteDir, 'secret.txt'), 'outside');
  await symlink('../secret.txt', join(remoteDir, 'site/link-out'));
  ssh2Sftp = await startSsh2Sftp(remoteDir);
  openssh = await startOpenSshSftp();
}, 240_000);
afterAll(async () => {
  await ssh2Sftp?.close();
  await openssh?.close();
  await app?.close();
  await dns?.close();
  await smtp?.close();
  await rm(remoteDir, { recursive: true, force: true });
});

async function power(p: Provisioned, action: 'start' | 'stop') {
  const { operation_id } = await owner.api.serviceInstancePower({
    path: { id: p.serviceInstanceId },
    body: { action },
  });
  const op = await awaitOperation(owner.api, p.serviceInstanceId, operation_id, 60_000);
  expect(op.status).toBe('succeeded');
}

const volume = (p: Provisioned, ...rest: string[]) =>
  join(app.substrateDir, 'volumes', p.volumeResourceId, ...rest);

type StartBody = components['schemas']['ImportStartRequest'];
const start = (c: Caller, body: Partial<StartBody>, target = site) => {
  // Imports are listed by when they started: a second apart, on the frozen clock.
  app.clock.advance(1000);
  return c.api.importStart({
    path: { id: target.serviceInstanceId },
    body: {
      host: '127.0.0.1',
      port: ssh2Sftp.port,
      username: ssh2Sftp.username,
      password: ssh2Sftp.password,
      remote_path: '/site',
      ...body,
    } as StartBody,
  });
};

/** Starts an import and waits for its operation to end; answers the import as it then reads. */
async function imported(body: Partial<StartBody>, target = site): Promise<Import> {
  const accepted = await start(owner, body, target);
  await awaitOperation(owner.api, target.serviceInstanceId, accepted.operation_id, 120_000);
  return owner.api.importGet({ path: { id: target.serviceInstanceId, import_id: accepted.id } });
}

async function state(target = site) {
  const [row] = await app.sql<{ imports: number; ops: number }[]>`
    select (select count(*) from service_imports where service_instance_id = ${target.serviceInstanceId})::int as imports,
           (select count(*) from service_operations where service_instance_id = ${target.serviceInstanceId})::int as ops`;
  return { ...row, files: (await readdir(volume(target), { recursive: true })).sort() };
}

describe('copying', () => {
  it('copies the remote tree from ssh2 Server whole, with its times, skipping links; the password never shown', async () => {
    await writeFile(volume(site, 'kept.txt'), 'mine');
    const accepted = await start(owner, {});
    expect(accepted).toMatchObject({
      status: 'preparing',
      host: '127.0.0.1',
      port: ssh2Sftp.port,
      remote_path: '/site',
      target_path: '/',
      delete_extraneous: false,
      cancel_requested: false,
    });
    expect(JSON.stringify(accepted)).not.toContain(ssh2Sftp.password);
    const op = await awaitOperation(owner.api, site.serviceInstanceId, accepted.operation_id, 120_000);
    expect(op).toMatchObject({ kind: 'import', status: 'succeeded', phase: 'cleaning_up', error: null });
    const done = await owner.api.importGet({ path: { id: site.serviceInstanceId, import_id: accepted.id } });
    expect(done).toMatchObject({
      status: 'succeeded',
      bytes_total: BIG + 17 + 14,
      bytes_transferred: BIG + 17 + 14,
      files_total: 4,
      files_transferred: 4,
      progress_percent: 100,
      current_file: null,
      error: null,
      completed_at: expect.any(String),
    });
    expect(await readFile(volume(site, 'index.html'), 'utf8')).toBe('<h1>imported</h1>');
    expect((await readFile(volume(site, 'assets/img/big.bin'))).equals(bigContent)).toBe(true);
    expect((await stat(volume(site, 'index.html'))).mtimeMs).toBe(1_600_000_000_000);
    expect((await stat(volume(site, 'empty-dir'))).isDirectory()).toBe(true);
    expect(await readFile(volume(site, 'empty.txt'), 'utf8')).toBe('');
    await expect(stat(volume(site, 'link-out'))).rejects.toThrow();
    expect(await readFile(volume(site, 'kept.txt'), 'utf8')).toBe('mine');
    const [sealed] = await app.sql`select password_sealed from service_imports where id = ${accepted.id}`;
    expect(sealed!.password_sealed).toBeNull();
    const audited = (await auditEntries(app, orgId)).filter((e) => e.target_id === accepted.id);
    expect(audited.map((e) => e.action)).toEqual(['import.started', 'import.succeeded']);
    expect(audited.every((e) => e.actor_user_id === owner.userId)).toBe(true);
  });

  it('skips what is complete by size and time, and deletes what is extraneous when asked', async () => {
    const before = await stat(volume(site, 'assets/img/big.bin'));
    await writeFile(join(remoteDir, 'site/assets/app.js'), 'console.log(2)');
    await utimes(join(remoteDir, 'site/assets/app.js'), 1_700_000_000, 1_700_000_000);
    const done = await imported({ delete_extraneous: true });
    expect(done).toMatchObject({ status: 'succeeded', delete_extraneous: true, progress_percent: 100 });
    // The big file was left alone (the same inode, never rewritten); the changed one copied again.
    expect((await stat(volume(site, 'assets/img/big.bin'))).ino).toBe(before.ino);
    expect(await readFile(volume(site, 'assets/app.js'), 'utf8')).toBe('console.log(2)');
    await expect(stat(volume(site, 'kept.txt'))).rejects.toThrow();
    const { imports } = await owner.api.importList({ path: { id: site.serviceInstanceId } });
    expect(imports[0]!.id).toBe(done.id);
    expect(imports.length).toBe(2);
  });

  it('copies again a same-size file changed in the second the previous import started (racy clean)', async () => {
    // The remote writes it now, by the platform's clock: within 2 s of the next import's start.
    const now = Math.floor(app.clock.now().getTime() / 1000) + 1;
    await writeFile(join(remoteDir, 'site/racy.txt'), 'aaaa');
    await utimes(join(remoteDir, 'site/racy.txt'), now, now);
    expect(await imported({})).toMatchObject({ status: 'succeeded' });
    expect(await readFile(volume(site, 'racy.txt'), 'utf8')).toBe('aaaa');
    // Changed again within the same second: the same size, the same whole-second time on the remote.
    await writeFile(join(remoteDir, 'site/racy.txt'), 'bbbb');
    await utimes(join(remoteDir, 'site/racy.txt'), now, now);
    const before = await stat(volume(site, 'assets/img/big.bin'));
    expect(await imported({})).toMatchObject({ status: 'succeeded' });
    expect(await readFile(volume(site, 'racy.txt'), 'utf8')).toBe('bbbb');
    // A file whose time is well before the previous import is still trusted: never written again.
    expect((await stat(volume(site, 'assets/img/big.bin'))).ino).toBe(before.ino);
    await rm(join(remoteDir, 'site/racy.txt'));
  });

  it('imports from OpenSSH sshd by a name resolved once through DNS_SERVERS', async () => {
    await writeFile(join(openssh.root, 'world.dat'), randomBytes(100_000));
    await mkdir(join(openssh.root, 'maps'));
    await writeFile(join(openssh.root, 'maps/one.txt'), 'map one');
    dns.setAddresses('sftp.example.test', '127.0.0.1');
    const asked = dns.queries.length;
    const done = await imported({
      host: 'sftp.example.test',
      port: openssh.port,
      username: openssh.username,
      password: openssh.password,
      remote_path: openssh.remotePath,
    });
    expect(done).toMatchObject({ status: 'succeeded', host: 'sftp.example.test', files_total: 2 });
    expect(
      (await readFile(volume(site, 'world.dat'))).equals(await readFile(join(openssh.root, 'world.dat'))),
    ).toBe(true);
    expect(await readFile(volume(site, 'maps/one.txt'), 'utf8')).toBe('map one');
    // One resolution (A and AAAA), at the start; the operation connected to the address it checked.
    expect(dns.queries.slice(asked).sort()).toEqual(['A sftp.example.test', 'AAAA sftp.example.test']);
  });
});

describe('refusals', () => {
  it('refuses private, loopback, link-local and unique-local hosts, and names resolving to them, changing nothing', async () => {
    dns.setAddresses('loop.example.test', '127.0.0.2');
    dns.setAddresses('mixed.example.test', '127.0.0.1', '10.1.2.3');
    const before = await state();
    for (const host of [
      '10.0.0.1',
      '::1',
      '169.254.10.1',
      'fd00::1',
      '224.0.0.1',
      '127.0.0.2',
      'loop.example.test',
      'mixed.example.test',
      'nowhere.example.test',
    ]) {
      expect(await outcome(start(owner, { host })), host).toEqual([422, 'import-host-refused']);
    }
    expect(await state()).toEqual(before);
  });

  it('judges IPv6 forms that embed an IPv4 address by that address (DECISIONS §8), changing nothing', async () => {
    const before = await state();
    for (const host of [
      '::127.0.0.1',
      '::7f00:1',
      '::127.0.0.2',
      '::ffff:127.0.0.2',
      '::ffff:7f00:2',
      '::ffff:0:127.0.0.2',
      '64:ff9b::127.0.0.1',
      '64:ff9b::a00:1',
      '2002:7f00:1::1',
      '2002:c0a8:101::1',
    ]) {
      expect(await outcome(start(owner, { host })), host).toEqual([422, 'import-host-refused']);
    }
    expect(await state()).toEqual(before);
  });

  it('refuses a running service (409 service-running), a Billing member and another service (404), changing nothing', async () => {
    const before = await state(other);
    expect(await outcome(start(owner, {}, other))).toEqual([409, 'service-running']);
    expect(await state(other)).toEqual(before);
    const mine = await state();
    expect(await outcome(start(billing, {}))).toEqual([404, 'not-found']);
    const [last] = (await owner.api.importList({ path: { id: site.serviceInstanceId } })).imports;
    expect(
      await outcome(owner.api.importGet({ path: { id: other.serviceInstanceId, import_id: last!.id } })),
    ).toEqual([404, 'not-found']);
    expect(
      await outcome(owner.api.importCancel({ path: { id: other.serviceInstanceId, import_id: last!.id } })),
    ).toEqual([404, 'not-found']);
    expect(await state()).toEqual(mine);
  });

  it('fails on a wrong password, with the password erased and the service free again', async () => {
    const done = await imported({ password: 'not-the-password' });
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/refused the username or password/);
    const [row] = await app.sql`select password_sealed from service_imports where id = ${done.id}`;
    expect(row!.password_sealed).toBeNull();
    expect(
      await outcome(owner.api.importCancel({ path: { id: site.serviceInstanceId, import_id: done.id } })),
    ).toEqual([422, 'import-finished']);
  });
});

describe('cancel', () => {
  it('refuses a cancel once the copy has ended and the import cleans up (its result decided): 422, nothing changed', async () => {
    const done = await imported({});
    expect(done.status).toBe('succeeded');
    // The moment between deciding the result and ending (milliseconds in a real import), held still: the
    // row as decideOutcome leaves it while the workloads are started again.
    await app.sql`update service_imports set status = 'cleaning_up', completed_at = null where id = ${done.id}`;
    try {
      const audits = async () =>
        (
          await app.sql`select count(*)::int as n from audit_entries where action = 'import.cancel_requested'`
        )[0]!.n as number;
      const before = { audits: await audits(), state: await state() };
      expect(
        await outcome(owner.api.importCancel({ path: { id: site.serviceInstanceId, import_id: done.id } })),
      ).toEqual([422, 'import-finished']);
      const [row] =
        await app.sql`select status, outcome, cancel_requested from service_imports where id = ${done.id}`;
      expect(row).toEqual({ status: 'cleaning_up', outcome: 'succeeded', cancel_requested: false });
      expect({ audits: await audits(), state: await state() }).toEqual(before);
    } finally {
      await app.sql`update service_imports set status = 'succeeded', completed_at = now() where id = ${done.id}`;
    }
  });

  it('stops a running import: another start is 409 meanwhile, files already copied stay, nothing partial', async () => {
    await rm(volume(site, 'assets'), { recursive: true, force: true });
    await rm(volume(site, 'index.html'));
    ssh2Sftp.readDelayMs = 500;
    try {
      const accepted = await start(owner, {});
      // Wait until the copy is under way.
      for (let i = 0; i < 400; i++) {
        const now = await owner.api.importGet({
          path: { id: site.serviceInstanceId, import_id: accepted.id },
        });
        if (now.status === 'running' && now.bytes_transferred > 0) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      const before = await state();
      expect(await outcome(start(owner, {}))).toEqual([409, 'operation-in-progress']);
      expect((await state()).imports).toBe(before.imports);
      const asked = await owner.api.importCancel({
        path: { id: site.serviceInstanceId, import_id: accepted.id },
      });
      expect(asked.cancel_requested).toBe(true);
      const op = await awaitOperation(owner.api, site.serviceInstanceId, accepted.operation_id, 60_000);
      expect(op.status).toBe('cancelled');
      const done = await owner.api.importGet({
        path: { id: site.serviceInstanceId, import_id: accepted.id },
      });
      expect(done).toMatchObject({ status: 'cancelled', cancel_requested: true, error: null });
      expect(done.bytes_transferred).toBeLessThan(BIG);
      // The big file was not finished: absent, and no temporary file left beside it.
      await expect(stat(volume(site, 'assets/img/big.bin'))).rejects.toThrow();
      expect(await readdir(volume(site, 'assets/img'))).toEqual([]);
      const audited = (await auditEntries(app, orgId)).filter((e) => e.target_id === accepted.id);
      expect(audited.map((e) => e.action)).toEqual([
        'import.started',
        'import.cancel_requested',
        'import.cancelled',
      ]);
    } finally {
      ssh2Sftp.readDelayMs = 0;
    }
  });
});
