// VPS access end to end on the local substrate (DECISIONS.md §8 "VPS access"; seed 001 §3 "old credentials
// cleared", "the vm_access setup step"): keys and a root password set through the API reach the running
// machine's OpenSSH sshd within 5 s through a real edge, OpenSSH's client signs in by key and ssh2 by
// password, a reinstall keeps the keys and clears the password, every refusal reads back that nothing
// changed, and the audit never holds a key or a password.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { randomPortPool, startTestEdge, type TestEdge } from '../support/edge.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { awaitOperation, provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { keyPair, keysDir, removeDir, sshByKey, sshByPassword, type KeyPair } from './ssh-login.js';

let app: TestApp;
let smtp: TestSmtp;
let edge: TestEdge;
let staff: Staff;
let owner: Caller;
let billing: Caller;
let stranger: Caller;
let orgId: string;
let vps: Provisioned;
let dir: string;
let laptop: KeyPair;
let desktop: KeyPair;
let ssh: { host: string; port: number };

/** How long a change may take to reach the running machine (DECISIONS.md §8). */
const APPLIED_WITHIN_MS = 5_000;

beforeAll(async () => {
  dir = await keysDir();
  [laptop, desktop] = await Promise.all([keyPair(dir, 'laptop'), keyPair(dir, 'desktop', 'ecdsa')]);
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', PORT_POOL: randomPortPool(8) },
  });
  edge = await startTestEdge(app);
  staff = await staffMember(app, smtp, 'va-staff', ['manage_services']);
  [owner, billing, stranger] = await Promise.all([
    signedIn(app, smtp, 'va-owner'),
    signedIn(app, smtp, 'va-billing'),
    signedIn(app, smtp, 'va-stranger'),
  ]);
  orgId = (
    await owner.api.organizationCreate({ body: { name: 'Boxes', slug: `boxes-${Date.now().toString(36)}` } })
  ).id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: billing.userId, role: 'billing' } });
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Boxes', slug: 'boxes' } })
  ).id;
  vps = await provisionService(staff.elevated, { projectId, productSlug: 'vps-small', name: 'Box' });
  const system = (
    await owner.api.externalAccessGet({ path: { id: vps.serviceInstanceId } })
  ).allocations.find((a) => a.is_system)!;
  ssh = { host: app.config.host, port: system.external_port };
  await edge.caughtUp();
  // The machine's sshd answers (and refuses: nothing lets anyone in yet) before anything is measured.
  const deadline = Date.now() + 30_000;
  while ((await sshByKey(ssh.host, ssh.port, laptop)) !== 'refused') {
    if (Date.now() > deadline) throw new Error("the machine's sshd did not answer");
    await new Promise((r) => setTimeout(r, 500));
  }
}, 180_000);
afterAll(async () => {
  await edge?.stop();
  await app?.close();
  await smtp?.close();
  await removeDir(dir);
});

const path = (resourceId = vps.primaryResourceId, serviceId = vps.serviceInstanceId) => ({
  id: serviceId,
  resource_id: resourceId,
});
const getAccess = (c: Caller = owner, p = path()) => c.api.vpsAccessGet({ path: p });
const setKeys = (keys: { name?: string; public_key: string }[], c: Caller = owner, p = path()) =>
  c.api.vpsAccessSshKeysSet({ path: p, body: { keys } });
const resetPassword = (c: Caller = owner, key?: string, p = path()) =>
  c.api.vpsAccessRootPasswordReset({ path: p, ...(key ? { header: { 'Idempotency-Key': key } } : {}) });
const authorizedKeysFile = () =>
  readFile(
    join(app.substrateDir, 'volumes', vps.volumeResourceId, 'rootfs', 'root', '.ssh', 'authorized_keys'),
    'utf8',
  ).catch(() => null);
const byKey = (key: KeyPair) => sshByKey(ssh.host, ssh.port, key);
const byPassword = (password: string) => sshByPassword(ssh.host, ssh.port, password);
const soon = { timeout: APPLIED_WITHIN_MS, interval: 200 };

describe('a fresh VPS', () => {
  it('answers where its SSH server is, as root, with no password and no keys', async () => {
    expect(await getAccess()).toEqual({
      username: 'root',
      host: ssh.host,
      port: ssh.port,
      password_set: false,
      ssh_keys: [],
    });
  });
});

describe('refusals', () => {
  it('hides the access of anything but the VPS machine, and from anyone who may not change the service', async () => {
    const before = await getAccess();
    const keysBefore = await authorizedKeysFile();
    const key = { public_key: laptop.publicLine };
    for (const p of [
      path(vps.volumeResourceId),
      path(randomUUID()),
      path(vps.primaryResourceId, randomUUID()),
    ]) {
      expect(await outcome(getAccess(owner, p))).toEqual([404, 'not-found']);
      expect(await outcome(setKeys([key], owner, p))).toEqual([404, 'not-found']);
      expect(await outcome(resetPassword(owner, undefined, p))).toEqual([404, 'not-found']);
    }
    for (const c of [billing, stranger]) {
      expect(await outcome(getAccess(c))).toEqual([404, 'not-found']);
      expect(await outcome(setKeys([key], c))).toEqual([404, 'not-found']);
      expect(await outcome(resetPassword(c))).toEqual([404, 'not-found']);
    }
    expect(await getAccess()).toEqual(before);
    expect(await authorizedKeysFile()).toBe(keysBefore);
  });

  it('refuses keys that are not one supported OpenSSH line, more than 10, or one listed twice', async () => {
    const before = await getAccess();
    const rsa1024 = await keyPair(dir, 'small-rsa', 'rsa', 1024);
    const cases: [string, { name?: string; public_key: string }[], [number, string]][] = [
      ['garbage', [{ public_key: 'not a key' }], [400, 'invalid-field-value']],
      ['rsa of 1024 bits', [{ public_key: rsa1024.publicLine }], [400, 'invalid-field-value']],
      [
        'a private key',
        [{ public_key: '-----BEGIN OPENSSH PRIVATE KEY-----' }],
        [400, 'invalid-field-value'],
      ],
      [
        'two lines',
        [{ public_key: `${laptop.publicLine}\n${desktop.publicLine}` }],
        [400, 'invalid-field-value'],
      ],
      [
        'twice',
        [{ public_key: laptop.publicLine }, { public_key: laptop.publicLine }],
        [400, 'invalid-field-value'],
      ],
      [
        'eleven',
        Array.from({ length: 11 }, () => ({ public_key: laptop.publicLine })),
        [400, 'invalid-request'],
      ],
      [
        'a good and a bad one',
        [{ public_key: laptop.publicLine }, { public_key: 'ssh-rsa AAAA' }],
        [400, 'invalid-field-value'],
      ],
    ];
    for (const [, keys, want] of cases) expect(await outcome(setKeys(keys))).toEqual(want);
    expect(await getAccess()).toEqual(before);
    expect(await byKey(laptop)).toBe('refused');
  });
});

describe('keys', () => {
  it('lets the keys set through the API sign in within 5 s, by OpenSSH', async () => {
    const answer = await setKeys([
      { name: 'laptop', public_key: `${laptop.publicLine}` },
      { public_key: desktop.publicLine },
    ]);
    expect(answer).toMatchObject({ username: 'root', password_set: false });
    expect(answer.ssh_keys).toEqual([
      {
        name: 'laptop',
        type: 'ssh-ed25519',
        fingerprint: expect.stringMatching(/^SHA256:[A-Za-z0-9+/]{43}$/),
        public_key: laptop.publicLine.split(' ').slice(0, 2).join(' '),
      },
      {
        name: 'desktop',
        type: 'ecdsa-sha2-nistp256',
        fingerprint: expect.stringMatching(/^SHA256:/),
        public_key: desktop.publicLine.split(' ').slice(0, 2).join(' '),
      },
    ]);
    expect(await getAccess()).toEqual(answer);
    // The session is the machine's root, confined: uid 0 inside.
    await expect.poll(() => byKey(laptop), soon).toContain('uid=0(root) gid=0(root)');
    expect(await byKey(desktop)).toContain('uid=0(root)');
    // Password sign-in stays off: no password was set.
    expect(await byPassword('anything')).toBe('client-authentication');
  });

  it('takes a key away within 5 s', async () => {
    await setKeys([{ public_key: desktop.publicLine }]);
    await expect.poll(() => byKey(laptop), soon).toBe('refused');
    expect(await byKey(desktop)).toContain('uid=0(root)');
    await setKeys([{ name: 'laptop', public_key: laptop.publicLine }]);
    await expect.poll(() => byKey(laptop), soon).toContain('uid=0(root)');
  });
});

describe('the root password', () => {
  let password = '';

  it('is made, shown once and accepted within 5 s; the same Idempotency-Key answers the same one', async () => {
    const key = randomUUID();
    ({ password } = await resetPassword(owner, key));
    expect(password).toMatch(/^[A-Za-z0-9_-]{24,}$/);
    expect(await resetPassword(owner, key)).toEqual({ password });
    expect(await getAccess()).toMatchObject({ password_set: true });
    await expect.poll(() => byPassword(password), soon).toContain('uid=0(root)');
    expect(await byPassword(`${password}x`)).toBe('client-authentication');
  });

  it('a new one replaces it within 5 s', async () => {
    const next = (await resetPassword()).password;
    expect(next).not.toBe(password);
    await expect.poll(() => byPassword(next), soon).toContain('uid=0(root)');
    expect(await byPassword(password)).toBe('client-authentication');
    password = next;
  });

  it('is audited without secrets', async () => {
    const actions = (await auditEntries(app, orgId)).map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['vps.ssh_keys_set', 'vps.root_password_reset']));
    const everything = JSON.stringify(
      await app.sql`select * from audit_entries where organization_id = ${orgId}`,
    );
    expect(everything).not.toContain(password);
    expect(everything).not.toContain(laptop.publicLine.split(' ')[1]);
    const stored = JSON.stringify(await app.sql`select * from vps_access`);
    expect(stored).not.toContain(password);
  });

  describe('a reinstall', () => {
    it('keeps the keys and clears the password', async () => {
      const started = await owner.api.vpsReinstall({
        path: path(),
        body: { confirm: true, os_image: 'debian-12' },
      });
      expect((await awaitOperation(owner.api, vps.serviceInstanceId, started.operation_id)).status).toBe(
        'succeeded',
      );
      expect(await getAccess()).toMatchObject({
        password_set: false,
        ssh_keys: [expect.objectContaining({ name: 'laptop' })],
      });
      // The fresh install boots with a new host key and only the kept key: OpenSSH signs in, the
      // password does not.
      await expect.poll(() => byKey(laptop), { timeout: 30_000, interval: 500 }).toContain('uid=0(root)');
      expect(await byPassword(password)).toBe('client-authentication');
      expect(await byKey(desktop)).toBe('refused');
    });

    it('a password reset after it signs in again', async () => {
      const { password: fresh } = await resetPassword();
      await expect.poll(() => byPassword(fresh), soon).toContain('uid=0(root)');
    });
  });
});
