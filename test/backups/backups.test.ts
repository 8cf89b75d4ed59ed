// Backups of a service's volume (document 2 §2 "Backup", §3, §4 "Backups"; DECISIONS.md §6 "Backups"),
// end to end on the local substrate: create while the service runs, restore through its phases with the
// data reverted whole, a damaged archive never restored, the ceiling under fifty parallel creates,
// delete, every refusal changing nothing, the driver without snapshots, and the audit.
import { randomUUID } from 'node:crypto';
import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { awaitOperation, provisionService, type Provisioned } from '../support/services.js';
import { startSecondProcess } from '../support/second-process.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let staff: Staff;
let owner: Caller;
let billing: Caller;
let orgId: string;
let projectId: string;
let site: Provisioned;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  // A second API process (the driver without snapshots) checks tokens on real time: start from now.
  app.clock.set(new Date());
  staff = await staffMember(app, smtp, 'bk-staff', ['manage_services']);
  [owner, billing] = await Promise.all([signedIn(app, smtp, 'bk-owner'), signedIn(app, smtp, 'bk-billing')]);
  orgId = (
    await owner.api.organizationCreate({
      body: { name: 'Backups', slug: `backups-${Date.now().toString(36)}` },
    })
  ).id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: billing.userId, role: 'billing' } });
  projectId = (await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Sites', slug: 'sites' } }))
    .id;
  site = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Shop' });
}, 180_000);
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const volumeFile = (p: Provisioned, ...rest: string[]) =>
  join(app.substrateDir, 'volumes', p.volumeResourceId, ...rest);
const archiveOf = (p: Provisioned, backupId: string) =>
  join(app.substrateDir, 'snapshots', p.volumeResourceId, `${backupId}.tar.zst`);
const at = (p: Provisioned) => ({ id: p.serviceInstanceId, resource_id: p.volumeResourceId });

const create = (c: Caller, name?: string | null, target = site, key?: string) =>
  c.api.backupCreate({
    path: at(target),
    ...(name === undefined ? {} : { body: { name } }),
    ...(key ? { header: { 'Idempotency-Key': key } } : {}),
  });
const list = (c: Caller, target = site) => c.api.backupList({ path: at(target) });

/** Creates a backup and waits for it to be made; answers it as listed. */
async function made(name?: string, target = site) {
  const accepted = await create(owner, name, target);
  const op = await awaitOperation(owner.api, target.serviceInstanceId, accepted.operation_id, 60_000);
  expect(op).toMatchObject({ kind: 'backup', status: 'succeeded', phase: 'snapshot', progress_percent: 100 });
  return (await list(owner, target)).backups.find((b) => b.id === accepted.backup.id)!;
}

/** Every row a backup request could write, and the volume's files: what a refusal must leave alone. */
async function state(target = site) {
  const [row] = await app.sql<{ backups: number; ops: number; keys: number }[]>`
    select (select count(*) from service_backups where service_instance_id = ${target.serviceInstanceId})::int as backups,
           (select count(*) from service_operations where service_instance_id = ${target.serviceInstanceId})::int as ops,
           (select count(*) from idempotency_keys)::int as keys`;
  const statuses = await app.sql`
    select id, status, restore_phase, deleted_at from service_backups where service_instance_id = ${target.serviceInstanceId} order by id`;
  return { ...row, statuses, files: (await readdir(volumeFile(target))).sort() };
}

describe('create and restore', () => {
  it('makes a backup while the service runs: creating at once, then ready with its size', async () => {
    await writeFile(volumeFile(site, 'index.html'), '<h1>version 1</h1>');
    const accepted = await create(owner, '  before the launch  ');
    expect(accepted.backup).toMatchObject({
      name: 'before the launch',
      status: 'creating',
      restore_phase: null,
      size_bytes: null,
      completed_at: null,
    });
    const op = await awaitOperation(owner.api, site.serviceInstanceId, accepted.operation_id, 60_000);
    expect(op).toMatchObject({ kind: 'backup', status: 'succeeded', progress_percent: 100, error: null });
    const { backups, max_backups } = await list(owner);
    expect(max_backups).toBe(5);
    const ready = backups.find((b) => b.id === accepted.backup.id)!;
    expect(ready).toMatchObject({ status: 'ready', restore_phase: null, completed_at: expect.any(String) });
    expect(ready.size_bytes).toBe((await stat(archiveOf(site, ready.id))).size);
    expect((await app.substrate!.unitStatus(site.primaryResourceId)).state).toBe('running');
    // Audited once, on success, as done by its caller.
    const audited = (await auditEntries(app, orgId)).filter((e) => e.target_id === ready.id);
    expect(audited).toEqual([
      expect.objectContaining({ action: 'backup.created', actor_user_id: owner.userId, target_type: 'backup' }),
    ]);
  });

  it('names a backup backup-YYYYMMDD-HHMMSS (UTC) when the name is absent, null or blank', async () => {
    const named: string[] = [];
    for (const name of [undefined, null, '   ']) {
      app.clock.advance(1000);
      const accepted = await create(owner, name);
      const stamp = app.clock.now().toISOString().replace(/[-:]/g, '');
      expect(accepted.backup.name).toBe(`backup-${stamp.slice(0, 8)}-${stamp.slice(9, 15)}`);
      named.push(accepted.backup.id);
      await awaitOperation(owner.api, site.serviceInstanceId, accepted.operation_id, 60_000);
    }
    const { backups } = await list(owner);
    // Newest first: the last made leads.
    expect(backups.slice(0, 3).map((b) => b.id)).toEqual([...named].reverse());
    for (const id of named) await owner.api.backupDelete({ path: { ...at(site), backup_id: id } });
  });

  it('restores: stopping, reverting, starting; the volume is the backup again, whole', async () => {
    const [first] = (await list(owner)).backups.filter((b) => b.name === 'before the launch');
    await writeFile(volumeFile(site, 'index.html'), '<h1>version 2</h1>');
    await writeFile(volumeFile(site, 'later.txt'), 'made after the backup');
    const accepted = await owner.api.backupRestore({ path: { ...at(site), backup_id: first!.id } });
    expect(accepted.backup).toMatchObject({ id: first!.id, status: 'restoring', restore_phase: 'stopping' });
    const seen: string[] = [];
    const op = await owner.api.waitForOperation(site.serviceInstanceId, accepted.operation_id, {
      intervalMs: 10,
      maxIntervalMs: 10,
      signal: AbortSignal.timeout(60_000),
      onProgress: (o) => void (o.phase && !seen.includes(o.phase) && seen.push(o.phase)),
    });
    expect(op).toMatchObject({
      kind: 'restore',
      status: 'succeeded',
      phase: 'starting',
      progress_percent: 100,
    });
    expect(seen).toEqual(['stopping', 'reverting', 'starting'].filter((p) => seen.includes(p)));
    expect(await readFile(volumeFile(site, 'index.html'), 'utf8')).toBe('<h1>version 1</h1>');
    await expect(stat(volumeFile(site, 'later.txt'))).rejects.toThrow();
    // Nothing left beside the volume.
    const beside = (await readdir(join(app.substrateDir, 'volumes'))).filter((n) => n.startsWith('.'));
    expect(beside).toEqual([]);
    expect((await list(owner)).backups.find((b) => b.id === first!.id)).toMatchObject({
      status: 'ready',
      restore_phase: null,
    });
    expect((await app.substrate!.unitStatus(site.primaryResourceId)).state).toBe('running');
    expect((await owner.api.serviceInstanceGet({ path: { id: site.serviceInstanceId } })).status).toBe(
      'running',
    );
    expect(
      (await auditEntries(app, orgId)).filter((e) => e.target_id === first!.id).map((e) => e.action),
    ).toEqual(['backup.created', 'backup.restored']);
  });

  it('never restores an archive that no longer matches: the backup is failed, the volume as it was', async () => {
    const backup = await made('to be damaged');
    const file = archiveOf(site, backup.id);
    const bytes = await readFile(file);
    const middle = Math.floor(bytes.length / 2);
    bytes[middle] = bytes[middle]! ^ 0xff;
    await writeFile(file, bytes);
    await writeFile(volumeFile(site, 'kept.txt'), 'still here');
    const accepted = await owner.api.backupRestore({ path: { ...at(site), backup_id: backup.id } });
    const op = await awaitOperation(owner.api, site.serviceInstanceId, accepted.operation_id, 60_000);
    expect(op).toMatchObject({ status: 'failed', phase: 'reverting' });
    expect(op.error).toMatch(/does not match/);
    expect((await list(owner)).backups.find((b) => b.id === backup.id)).toMatchObject({
      status: 'failed',
      restore_phase: null,
    });
    expect(await readFile(volumeFile(site, 'kept.txt'), 'utf8')).toBe('still here');
    // A failed backup is not restorable: 422 backup-not-ready, nothing started.
    const before = await state();
    expect(await outcome(owner.api.backupRestore({ path: { ...at(site), backup_id: backup.id } }))).toEqual([
      422,
      'backup-not-ready',
    ]);
    expect(await state()).toEqual(before);
    // A restore that failed is not audited as restored.
    expect(
      (await auditEntries(app, orgId)).filter((e) => e.target_id === backup.id).map((e) => e.action),
    ).toEqual(['backup.created']);
    await app.worker!.runDue();
    expect((await app.substrate!.unitStatus(site.primaryResourceId)).state).toBe('running');
  });
});

describe('the ceiling', () => {
  it('fifty parallel creates at the ceiling minus one make exactly one backup', async () => {
    const target = await provisionService(staff.elevated, {
      projectId,
      productSlug: 'web-app',
      name: 'Race',
    });
    const now = app.clock.now();
    for (let i = 0; i < 4; i += 1) {
      await app.sql`
        insert into service_backups (id, service_instance_id, volume_id, name, status, size_bytes, sha256, created_at, completed_at)
        values (${randomUUID()}, ${target.serviceInstanceId}, ${target.volumeResourceId}, ${`old-${i}`}, 'ready', 1,
                ${'0'.repeat(64)}, ${now}, ${now})`;
    }
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => outcome(create(owner, 'race', target))),
    );
    expect(answers.filter((a) => a === 'ok')).toHaveLength(1);
    expect(answers.filter((a) => a !== 'ok')).toEqual(Array(49).fill([422, 'quota-exceeded']));
    const { backups } = await list(owner, target);
    expect(backups).toHaveLength(5);
    expect(backups.filter((b) => b.name === 'race')).toHaveLength(1);
    const refused = await owner.api.backupCreate({ path: at(target) }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 422, code: 'quota-exceeded', details: { limit: 5 } });
    const [op] = await app.sql<{ id: string }[]>`
      select id from service_operations where service_instance_id = ${target.serviceInstanceId} and kind = 'backup'`;
    await awaitOperation(owner.api, target.serviceInstanceId, op!.id, 60_000);
  });
});

describe('delete', () => {
  it("deletes a ready backup (its archive removed); a creating one is 409; another instance's is 404", async () => {
    const backup = await made('short-lived');
    expect((await stat(archiveOf(site, backup.id))).isFile()).toBe(true);
    await owner.api.backupDelete({ path: { ...at(site), backup_id: backup.id } });
    expect((await list(owner)).backups.map((b) => b.id)).not.toContain(backup.id);
    await app.worker!.runDue();
    await expect(stat(archiveOf(site, backup.id))).rejects.toThrow();
    expect((await auditEntries(app, orgId)).some((e) => e.action === 'backup.deleted')).toBe(true);

    const other = await provisionService(staff.elevated, {
      projectId,
      productSlug: 'block-game',
      name: 'Other',
    });
    const mine = (await list(owner)).backups[0]!;
    const before = await state();
    expect(await outcome(owner.api.backupDelete({ path: { ...at(other), backup_id: mine.id } }))).toEqual([
      404,
      'not-found',
    ]);
    // Restoring another instance's backup onto this volume, or this one's onto another: unknown ids.
    expect(
      await outcome(owner.api.backupRestore({ path: { ...at(other), backup_id: mine.id } })),
    ).toEqual([404, 'not-found']);
    expect(await state()).toEqual(before);
    expect(await outcome(owner.api.backupDelete({ path: { ...at(site), backup_id: randomUUID() } }))).toEqual(
      [404, 'not-found'],
    );
  });
});

describe('a backup being made or restored', () => {
  it('is neither deleted (409) nor restored (creating: 422 backup-not-ready; restoring: 409); nothing changes', async () => {
    // Rows as a running backup and a running restore leave them (their operations run elsewhere).
    const creating = randomUUID();
    const restoring = randomUUID();
    const now = app.clock.now();
    await app.sql`
      insert into service_backups (id, service_instance_id, volume_id, name, status, restore_phase, size_bytes, sha256, created_at)
      values (${creating}, ${site.serviceInstanceId}, ${site.volumeResourceId}, 'being made', 'creating', null, null, null, ${now}),
             (${restoring}, ${site.serviceInstanceId}, ${site.volumeResourceId}, 'being restored', 'restoring', 'reverting', 1,
              ${'0'.repeat(64)}, ${now})`;
    try {
      const before = await state();
      const call = (id: string) => ({ path: { ...at(site), backup_id: id } });
      expect(await outcome(owner.api.backupDelete(call(creating)))).toEqual([409, 'operation-in-progress']);
      expect(await outcome(owner.api.backupDelete(call(restoring)))).toEqual([409, 'operation-in-progress']);
      expect(await outcome(owner.api.backupRestore(call(creating)))).toEqual([422, 'backup-not-ready']);
      expect(await outcome(owner.api.backupRestore(call(restoring)))).toEqual([409, 'operation-in-progress']);
      expect(await state()).toEqual(before);
    } finally {
      await app.sql`delete from service_backups where id in (${creating}, ${restoring})`;
    }
  });
});

describe('refused, changing nothing', () => {
  it('a resource that is not the volume, a product without backups, and a Billing member: the 404 of an unknown id', async () => {
    const arena = await provisionService(staff.elevated, {
      projectId,
      productSlug: 'arena-game',
      name: 'Arena',
    });
    const before = await state();
    const unknown = await outcome(
      owner.api.backupList({ path: { id: randomUUID(), resource_id: randomUUID() } }),
    );
    expect(unknown).toEqual([404, 'not-found']);
    expect(
      await outcome(
        owner.api.backupList({ path: { id: site.serviceInstanceId, resource_id: site.primaryResourceId } }),
      ),
    ).toEqual(unknown);
    expect(
      await outcome(
        owner.api.backupCreate({ path: { id: site.serviceInstanceId, resource_id: site.primaryResourceId } }),
      ),
    ).toEqual(unknown);
    expect(await outcome(create(billing))).toEqual(unknown);
    expect(await outcome(list(owner, arena))).toEqual(unknown);
    expect(await outcome(create(owner, 'x', arena))).toEqual(unknown);
    expect(await state()).toEqual(before);
  });

  it('another operation holding the service: 409; a suspended subscription: 422', async () => {
    const target = await provisionService(staff.elevated, {
      projectId,
      productSlug: 'web-app',
      name: 'Held',
    });
    const power = await owner.api.serviceInstancePower({
      path: { id: target.serviceInstanceId },
      body: { action: 'restart' },
    });
    const before = await state(target);
    expect(await outcome(create(owner, 'x', target))).toEqual([409, 'operation-in-progress']);
    expect(await state(target)).toEqual(before);
    await awaitOperation(owner.api, target.serviceInstanceId, power.operation_id, 60_000);


    await staff.elevated.adminSubscriptionSuspend({ path: { id: target.subscriptionId } });
    const suspended = await state(target);
    expect(await outcome(create(owner, 'x', target))).toEqual([422, 'subscription-not-serviceable']);
    expect(await state(target)).toEqual(suspended);
    // Listing still answers.
    expect((await list(owner, target)).backups).toEqual([]);
  });

  it('Idempotency-Key: a retry answers the first answer and makes one backup', async () => {
    const key = randomUUID();
    const first = await create(owner, 'once', site, key);
    expect(await create(owner, 'once', site, key)).toEqual(first);
    expect(await outcome(create(owner, 'twice', site, key))).toEqual([422, 'idempotency-key-reused']);
    await awaitOperation(owner.api, site.serviceInstanceId, first.operation_id, 60_000);
    expect((await list(owner)).backups.filter((b) => b.name === 'once')).toHaveLength(1);
  });
});

describe('a platform that cannot take snapshots', () => {
  it('lists (empty, with the real max_backups) and refuses create with 422 snapshots-unsupported', async () => {
    const api = await startSecondProcess(app, { SUBSTRATE: 'kubernetes', WORKER: 'off' });
    try {
      const client = createClient({ baseUrl: api.baseUrl, token: owner.token, retries: 0 });
      const target = await provisionService(staff.elevated, {
        projectId,
        productSlug: 'web-app',
        name: 'No snaps',
      });
      expect(await client.backupList({ path: at(target) })).toEqual({ backups: [], max_backups: 5 });
      const before = await state(target);
      expect(await outcome(client.backupCreate({ path: at(target) }))).toEqual([
        422,
        'snapshots-unsupported',
      ]);
      expect(await state(target)).toEqual(before);
    } finally {
      await api.stop();
    }
  });
});
