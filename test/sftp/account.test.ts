// The SFTP account routes (document 2 §4 "SFTP"; DECISIONS.md §4, §6 "SFTP"): GET before provisioning
// is 422 sftp-not-provisioned; PATCH {enabled} is idempotent and provisions; rotate shows the password
// once and keeps an argon2id digest; a write racing another is 409 under the row lock; every refusal on
// the route is the 404 of an unknown id and reads back unchanged.
import { randomUUID } from 'node:crypto';
import argon2 from 'argon2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let owner: Caller;
let member: Caller;
let billing: Caller;
let stranger: Caller;
let orgId: string;
let web: Provisioned;
let arena: Provisioned;
let fresh: Provisioned;
let staff: Staff;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  staff = await staffMember(app, smtp, 'sftpa-staff', ['manage_services']);
  [owner, member, billing, stranger] = await Promise.all([
    signedIn(app, smtp, 'sftpa-owner'),
    signedIn(app, smtp, 'sftpa-member'),
    signedIn(app, smtp, 'sftpa-billing'),
    signedIn(app, smtp, 'sftpa-stranger'),
  ]);
  orgId = (
    await owner.api.organizationCreate({ body: { name: 'Sites', slug: `sites-${Date.now().toString(36)}` } })
  ).id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: member.userId, role: 'member' } });
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: billing.userId, role: 'billing' } });
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Main', slug: 'main' } })
  ).id;
  [web, arena, fresh] = await Promise.all([
    provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Site' }),
    provisionService(staff.elevated, { projectId, productSlug: 'arena-game', name: 'Arena' }),
    provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Fresh' }),
  ]);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

const accountRow = async (serviceId: string) =>
  (
    await app.sql<{ enabled: boolean; password_digest: string | null; generation: string }[]>`
      select enabled, password_digest, generation::text from sftp_accounts where service_instance_id = ${serviceId}`
  )[0];

describe('the SFTP account', () => {
  it('is 422 sftp-not-provisioned before the first enable, and disabling first provisions nothing', async () => {
    expect(await outcome(owner.api.sftpGet({ path: { id: web.serviceInstanceId } }))).toEqual([
      422,
      'sftp-not-provisioned',
    ]);
    expect(
      await outcome(owner.api.sftpUpdate({ path: { id: web.serviceInstanceId }, body: { enabled: false } })),
    ).toEqual([422, 'sftp-not-provisioned']);
    expect(await accountRow(web.serviceInstanceId)).toBeUndefined();
  });

  it('is provisioned by PATCH {enabled: true}, idempotently, with the host key fingerprint', async () => {
    const first = await member.api.sftpUpdate({
      path: { id: web.serviceInstanceId },
      body: { enabled: true },
    });
    expect(first).toMatchObject({
      enabled: true,
      host: '127.0.0.1',
      port: app.config.sftpPort,
      password_set: false,
    });
    expect(first.username).toMatch(/^site\.[0-9a-f]{12}$/);
    expect(first.host_key_fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    const generation = (await accountRow(web.serviceInstanceId))!.generation;
    const audits = (await auditEntries(app, orgId)).filter((e) => e.action.startsWith('sftp.')).length;
    const again = await owner.api.sftpUpdate({
      path: { id: web.serviceInstanceId },
      body: { enabled: true },
    });
    expect(again).toEqual(first);
    expect((await accountRow(web.serviceInstanceId))!.generation).toBe(generation);
    expect((await auditEntries(app, orgId)).filter((e) => e.action.startsWith('sftp.')).length).toBe(audits);
    expect(await owner.api.sftpGet({ path: { id: web.serviceInstanceId } })).toEqual(first);
    expect(await billing.api.sftpGet({ path: { id: web.serviceInstanceId } })).toEqual(first);
  });

  it('rotates: the password once, kept as an argon2id digest, audited without it', async () => {
    const before = await accountRow(web.serviceInstanceId);
    const answer = await owner.api.sftpRotate({ path: { id: web.serviceInstanceId } });
    expect(answer).toEqual({
      username: expect.stringMatching(/^site\./),
      host: '127.0.0.1',
      port: app.config.sftpPort,
      password: expect.stringMatching(/^[0-9A-Za-z]{25}$/),
    });
    const row = (await accountRow(web.serviceInstanceId))!;
    expect(row.password_digest).toMatch(/^\$argon2id\$/);
    expect(row.password_digest).not.toContain(answer.password);
    expect(await argon2.verify(row.password_digest!, answer.password)).toBe(true);
    expect(BigInt(row.generation)).toBeGreaterThan(BigInt(before!.generation));
    const account = await owner.api.sftpGet({ path: { id: web.serviceInstanceId } });
    expect(account.password_set).toBe(true);
    expect(JSON.stringify(account)).not.toContain(answer.password);
    const entries = await auditEntries(app, orgId);
    expect(
      entries.some((e) => e.action === 'sftp.password_rotated' && e.target_id === web.serviceInstanceId),
    ).toBe(true);
    const logged = JSON.stringify(app.logs);
    expect(logged).not.toContain(answer.password);
  });

  it('a first rotate provisions the account enabled', async () => {
    expect(await outcome(owner.api.sftpGet({ path: { id: fresh.serviceInstanceId } }))).toEqual([
      422,
      'sftp-not-provisioned',
    ]);
    await owner.api.sftpRotate({ path: { id: fresh.serviceInstanceId } });
    expect(await owner.api.sftpGet({ path: { id: fresh.serviceInstanceId } })).toMatchObject({
      enabled: true,
      password_set: true,
    });
  });

  it('disables and enables, each change audited and moving the generation', async () => {
    const before = (await accountRow(web.serviceInstanceId))!;
    const off = await owner.api.sftpUpdate({ path: { id: web.serviceInstanceId }, body: { enabled: false } });
    expect(off.enabled).toBe(false);
    const row = (await accountRow(web.serviceInstanceId))!;
    expect(row.enabled).toBe(false);
    expect(row.password_digest).toBe(before.password_digest);
    expect(BigInt(row.generation)).toBe(BigInt(before.generation) + 1n);
    // Rotating a disabled account keeps it disabled.
    await owner.api.sftpRotate({ path: { id: web.serviceInstanceId } });
    expect((await accountRow(web.serviceInstanceId))!.enabled).toBe(false);
    await owner.api.sftpUpdate({ path: { id: web.serviceInstanceId }, body: { enabled: true } });
    const actions = (await auditEntries(app, orgId)).map((e) => e.action);
    expect(actions).toContain('sftp.disabled');
    expect(actions.filter((a) => a === 'sftp.enabled').length).toBe(2);
  });

  it('is 409 operation-in-progress while another write holds the account, and changes nothing', async () => {
    const before = (await accountRow(web.serviceInstanceId))!;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = app.sql.begin(async (tx) => {
      await tx`select 1 from sftp_accounts where service_instance_id = ${web.serviceInstanceId} for update`;
      locked();
      await held;
    });
    await isLocked;
    try {
      expect(
        await outcome(
          owner.api.sftpUpdate({ path: { id: web.serviceInstanceId }, body: { enabled: false } }),
        ),
      ).toEqual([409, 'operation-in-progress']);
      expect(await outcome(owner.api.sftpRotate({ path: { id: web.serviceInstanceId } }))).toEqual([
        409,
        'operation-in-progress',
      ]);
    } finally {
      release();
      await holder;
    }
    expect(await accountRow(web.serviceInstanceId)).toEqual(before);
  });

  it('decides concurrent rotates one at a time: the stored digest is one answered password', async () => {
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        outcome2(owner.api.sftpRotate({ path: { id: web.serviceInstanceId } })),
      ),
    );
    const passwords = answers.flatMap((a) => (Array.isArray(a) ? [] : [a]));
    const refused = answers.filter((a) => Array.isArray(a));
    for (const r of refused) expect(r).toEqual([409, 'operation-in-progress']);
    expect(passwords.length).toBeGreaterThan(0);
    const digest = (await accountRow(web.serviceInstanceId))!.password_digest!;
    const matching = await Promise.all(passwords.map((p) => argon2.verify(digest, p.password)));
    expect(matching.filter(Boolean).length).toBe(1);
  });

  it('is the 404 of an unknown id for strangers, Billing writes, a product without SFTP and an unknown service', async () => {
    const before = await accountRow(web.serviceInstanceId);
    const audits = (await auditEntries(app, orgId)).length;
    const id = web.serviceInstanceId;
    for (const attempt of [
      () => stranger.api.sftpGet({ path: { id } }),
      () => stranger.api.sftpUpdate({ path: { id }, body: { enabled: false } }),
      () => stranger.api.sftpRotate({ path: { id } }),
      () => billing.api.sftpUpdate({ path: { id }, body: { enabled: false } }),
      () => billing.api.sftpRotate({ path: { id } }),
      () => owner.api.sftpGet({ path: { id: arena.serviceInstanceId } }),
      () => owner.api.sftpUpdate({ path: { id: arena.serviceInstanceId }, body: { enabled: true } }),
      () => owner.api.sftpRotate({ path: { id: arena.serviceInstanceId } }),
      () => owner.api.sftpGet({ path: { id: randomUUID() } }),
    ]) {
      expect(await outcome(attempt())).toEqual([404, 'not-found']);
    }
    expect(await accountRow(web.serviceInstanceId)).toEqual(before);
    expect(await accountRow(arena.serviceInstanceId)).toBeUndefined();
    expect((await auditEntries(app, orgId)).length).toBe(audits);
  });

  it('refuses changes to a suspended service (422) and changes nothing', async () => {
    await staff.elevated.adminSubscriptionSuspend({ path: { id: fresh.subscriptionId } });
    const before = await accountRow(fresh.serviceInstanceId);
    expect(
      await outcome(
        owner.api.sftpUpdate({ path: { id: fresh.serviceInstanceId }, body: { enabled: false } }),
      ),
    ).toEqual([422, 'subscription-not-serviceable']);
    expect(await outcome(owner.api.sftpRotate({ path: { id: fresh.serviceInstanceId } }))).toEqual([
      422,
      'subscription-not-serviceable',
    ]);
    expect(await accountRow(fresh.serviceInstanceId)).toEqual(before);
    // Reading still works.
    expect((await owner.api.sftpGet({ path: { id: fresh.serviceInstanceId } })).enabled).toBe(true);
  });
});

async function outcome2<T>(p: Promise<T>): Promise<T | [number, string]> {
  try {
    return await p;
  } catch (err) {
    const result = await outcome(Promise.reject(err));
    if (result === 'ok') throw err;
    return result;
  }
}
