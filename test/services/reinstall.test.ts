// POST /service-instances/{id}/resources/{resource_id}/reinstall (document 2 §4 "VPS reinstall", §3 the
// VPS row), end to end on the local substrate: every seed rule refused with nothing started, the rebuild
// through its recorded phases, old credentials gone, the fresh install booted, public endpoints kept; the
// service lease (409, and queueing behind a backup), and Idempotency-Key.
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOf, staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { awaitOperation, provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { finishOperation } from '../../server/src/operations/engine.js';
import type { OperationRow } from '../../server/src/operations/store.js';

let app: TestApp;
let smtp: TestSmtp;
let staff: Staff;
let owner: Caller;
let member: Caller;
let billing: Caller;
let stranger: Caller;
let orgId: string;
let projectId: string;
let vps: Provisioned;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  staff = await staffMember(app, smtp, 'ri-staff', ['manage_services']);
  [owner, member, billing, stranger] = await Promise.all([
    signedIn(app, smtp, 'ri-owner'),
    signedIn(app, smtp, 'ri-member'),
    signedIn(app, smtp, 'ri-billing'),
    signedIn(app, smtp, 'ri-stranger'),
  ]);
  orgId = (
    await owner.api.organizationCreate({
      body: { name: 'Servers', slug: `servers-${Date.now().toString(36)}` },
    })
  ).id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: member.userId, role: 'member' } });
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: billing.userId, role: 'billing' } });
  projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Servers', slug: 'servers' } })
  ).id;
  vps = await provisionService(staff.elevated, { projectId, name: 'Box' });
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const reinstall = (c: Caller, body: { confirm: boolean; os_image: string }, target = vps, key?: string) =>
  c.api.vpsReinstall({
    path: { id: target.serviceInstanceId, resource_id: target.primaryResourceId },
    body,
    ...(key ? { header: { 'Idempotency-Key': key } } : {}),
  });

const operationCount = async () =>
  (
    await app.sql<{ n: number }[]>`select count(*)::int as n from service_operations where kind = 'reinstall'`
  )[0]!.n;

/** The machine as its resource row and volume say: what a refusal must leave alone. */
async function machineState(target = vps) {
  const [row] = await app.sql`
    select status, os_image, signal_generation from service_resources where id = ${target.primaryResourceId}`;
  return {
    row,
    image: await app.substrate!.installedImage(target.volumeResourceId),
    ops: await operationCount(),
  };
}

const volumePath = (p: Provisioned, ...rest: string[]) =>
  join(app.substrateDir, 'volumes', p.volumeResourceId, ...rest);

describe('refused, starting nothing', () => {
  it.each([
    ['confirm false', { confirm: false, os_image: 'debian-12' }, [400, 'invalid-field-value']],
    ['an image of no product', { confirm: true, os_image: 'plan9' }, [400, 'invalid-field-value']],
    ['a disabled image', { confirm: true, os_image: 'debian-11' }, [400, 'invalid-field-value']],
    [
      'an image whose minimum storage the plan does not meet',
      { confirm: true, os_image: 'ubuntu-24.04-desktop' },
      [400, 'invalid-field-value'],
    ],
    [
      'an image whose monthly fee differs',
      { confirm: true, os_image: 'windows-server-2022' },
      [400, 'invalid-field-value'],
    ],
  ] as const)('%s: 400', async (_name, body, want) => {
    const before = await machineState();
    expect(await outcome(reinstall(owner, body))).toEqual(want);
    expect(await machineState()).toEqual(before);
  });

  it('a missing confirm is 400 invalid-request', async () => {
    const before = await machineState();
    const res = await fetch(
      `${app.baseUrl}/api/v2/service-instances/${vps.serviceInstanceId}/resources/${vps.primaryResourceId}/reinstall`,
      {
        method: 'POST',
        headers: { authorization: owner.token, 'content-type': 'application/json' },
        body: JSON.stringify({ os_image: 'debian-12' }),
      },
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe('invalid-request');
    expect(await machineState()).toEqual(before);
  });

  it('a resource that is not a virtual machine of a VPS service: 422 not-a-virtual-machine', async () => {
    const before = await machineState();
    const onVolume = owner.api.vpsReinstall({
      path: { id: vps.serviceInstanceId, resource_id: vps.volumeResourceId },
      body: { confirm: true, os_image: 'debian-12' },
    });
    expect(await outcome(onVolume)).toEqual([422, 'not-a-virtual-machine']);
    const web = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Site' });
    expect(await outcome(reinstall(owner, { confirm: true, os_image: 'debian-12' }, web))).toEqual([
      422,
      'not-a-virtual-machine',
    ]);
    expect(await machineState()).toEqual(before);
  });

  it('anyone who may not change the service gets the 404 of an unknown id', async () => {
    const before = await machineState();
    const body = { confirm: true, os_image: 'debian-12' };
    const unknown = await outcome(
      owner.api.vpsReinstall({ path: { id: randomUUID(), resource_id: vps.primaryResourceId }, body }),
    );
    expect(unknown).toEqual([404, 'not-found']);
    expect(await outcome(reinstall(stranger, body))).toEqual(unknown);
    expect(await outcome(reinstall(billing, body))).toEqual(unknown);
    expect(
      await outcome(
        owner.api.vpsReinstall({ path: { id: vps.serviceInstanceId, resource_id: randomUUID() }, body }),
      ),
    ).toEqual(unknown);
    // An API token needs orders.manage; granted for another project it does not reach this one.
    const token = async (
      name: string,
      capability: string,
      scope: { kind: 'all' } | { kind: 'project'; id: string },
    ) =>
      clientOf(
        app,
        (
          await owner.api.meApiTokenCreate({
            body: { name, authorization: { grants: [{ capability, scope }] } },
          })
        ).secret,
      );
    const readOnly = await token('read-only', 'services.read', { kind: 'all' });
    expect(
      await outcome(
        readOnly.vpsReinstall({
          path: { id: vps.serviceInstanceId, resource_id: vps.primaryResourceId },
          body,
        }),
      ),
    ).toEqual(unknown); // a missing capability answers as an unknown id (issue 17 defect 3)
    const other = (
      await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Other', slug: 'other' } })
    ).id;
    const elsewhere = await token('elsewhere', 'orders.manage', { kind: 'project', id: other });
    expect(
      await outcome(
        elsewhere.vpsReinstall({
          path: { id: vps.serviceInstanceId, resource_id: vps.primaryResourceId },
          body,
        }),
      ),
    ).toEqual(unknown);
    expect(await machineState()).toEqual(before);
  });
});

describe('the rebuild', () => {
  it('runs stop, wipe, install, vm_access and boot, clears the old credentials and keeps public endpoints', async () => {
    // What a customer left on the machine: a key that let them in, and a file of their own.
    await mkdir(volumePath(vps, 'rootfs', 'root', '.ssh'), { recursive: true });
    await writeFile(
      volumePath(vps, 'rootfs', 'root', '.ssh', 'authorized_keys'),
      'ssh-ed25519 AAAA old-key\n',
    );
    await writeFile(volumePath(vps, 'rootfs', 'root', 'notes.txt'), 'mine');
    const contractBefore = await app.substrate!.readUnitSignal(vps.primaryResourceId);
    const accessBefore = await readFile(volumePath(vps, 'rootfs', 'etc', 'svc-access.json'), 'utf8').catch(
      () => null,
    );

    const accepted = await reinstall(member, { confirm: true, os_image: 'rocky-9' });
    expect(accepted).toEqual({
      operation_id: expect.any(String),
      os_image: 'rocky-9',
      resource_id: vps.primaryResourceId,
      service_instance_id: vps.serviceInstanceId,
    });
    const seen = new Set<string>();
    const op = await member.api.waitForOperation(vps.serviceInstanceId, accepted.operation_id, {
      intervalMs: 10,
      maxIntervalMs: 10,
      signal: AbortSignal.timeout(30_000),
      onProgress: (o) => void (o.phase && seen.add(o.phase)),
    });
    expect(op).toMatchObject({
      kind: 'reinstall',
      status: 'succeeded',
      phase: 'boot',
      progress_percent: 100,
      error: null,
    });
    expect(op.completed_at).not.toBeNull();
    expect([...seen].every((p) => ['stop', 'wipe', 'install', 'vm_access', 'boot'].includes(p))).toBe(true);
    // Seen in their order, ending at boot (a fast phase may pass between two polls).
    const order = ['stop', 'wipe', 'install', 'vm_access', 'boot'];
    expect([...seen]).toEqual(order.filter((p) => seen.has(p)));
    expect(seen.has('boot')).toBe(true);

    expect(await app.substrate!.installedImage(vps.volumeResourceId)).toBe('rocky-9');
    // Only the keys the platform holds are written back (none were set through the API).
    expect(await readFile(volumePath(vps, 'rootfs', 'root', '.ssh', 'authorized_keys'), 'utf8')).toBe('');
    await expect(stat(volumePath(vps, 'rootfs', 'root', 'notes.txt'))).rejects.toThrow();
    const accessAfter = await readFile(volumePath(vps, 'rootfs', 'etc', 'svc-access.json'), 'utf8');
    expect(accessAfter).not.toBe(accessBefore);
    expect(accessAfter).not.toContain('old-key');

    const status = await app.substrate!.unitStatus(vps.primaryResourceId);
    const contractAfter = await app.substrate!.readUnitSignal(vps.primaryResourceId);
    expect(status.state).toBe('running');
    expect(contractAfter!.generation).toBeGreaterThan(contractBefore!.generation);
    expect(status.observedGeneration).toBe(contractAfter!.generation);
    expect(contractAfter!.publicEndpoints).toEqual(contractBefore!.publicEndpoints);

    const { resources } = await owner.api.serviceInstanceResourceList({
      path: { id: vps.serviceInstanceId },
    });
    expect(resources[0]).toMatchObject({ id: vps.primaryResourceId, status: 'running', os_image: 'rocky-9' });
    expect((await auditEntries(app, orgId)).some((e) => e.action === 'service.reinstall_started')).toBe(true);
  });

  it('allows the installed image', async () => {
    const accepted = await reinstall(owner, { confirm: true, os_image: 'rocky-9' });
    expect((await awaitOperation(owner.api, vps.serviceInstanceId, accepted.operation_id)).status).toBe(
      'succeeded',
    );
  });
});

describe('the service lease', () => {
  it('lets one of two concurrent reinstalls start; the other is 409 operation-in-progress', async () => {
    const target = await provisionService(staff.elevated, { projectId, name: 'Race' });
    const body = { confirm: true, os_image: 'debian-12' };
    const answers = await Promise.all([1, 2, 3].map(() => outcome(reinstall(owner, body, target))));
    expect(answers.filter((a) => a === 'ok')).toHaveLength(1);
    expect(answers.filter((a) => a !== 'ok')).toEqual([
      [409, 'operation-in-progress'],
      [409, 'operation-in-progress'],
    ]);
    const [{ n }] = await app.sql<[{ n: number }]>`
      select count(*)::int as n from service_operations where service_instance_id = ${target.serviceInstanceId} and kind = 'reinstall'`;
    expect(n).toBe(1);
  });

  it('queues a reinstall behind a backup holding the service, and starts it when the backup ends', async () => {
    const target = await provisionService(staff.elevated, { projectId, name: 'Queue' });
    // A backup holding the service, as the backup feature will take it: an operation row and the lease.
    const backupId = randomUUID();
    const now = app.clock.now();
    await app.sql`
      insert into service_operations (id, service_instance_id, kind, status, phase, created_at, updated_at, started_at)
      values (${backupId}, ${target.serviceInstanceId}, 'backup', 'running', 'snapshot', ${now}, ${now}, ${now})`;
    await app.sql`insert into service_leases (service_instance_id, operation_id, acquired_at) values (${target.serviceInstanceId}, ${backupId}, ${now})`;

    const accepted = await reinstall(owner, { confirm: true, os_image: 'ubuntu-24.04' }, target);
    const queued = await owner.api.serviceOperationGet({
      path: { id: target.serviceInstanceId, operation_id: accepted.operation_id },
    });
    expect(queued).toMatchObject({ status: 'queued', phase: null });
    // A second reinstall does not queue behind the first.
    expect(await outcome(reinstall(owner, { confirm: true, os_image: 'ubuntu-24.04' }, target))).toEqual([
      409,
      'operation-in-progress',
    ]);
    expect(await app.substrate!.installedImage(target.volumeResourceId)).toBe('debian-12');

    const [backup] = await app.sql<OperationRow[]>`select * from service_operations where id = ${backupId}`;
    await app.sql.begin((tx) =>
      finishOperation(tx, backup!, { status: 'succeeded', error: null }, app.clock.now()),
    );
    expect((await awaitOperation(owner.api, target.serviceInstanceId, accepted.operation_id)).status).toBe(
      'succeeded',
    );
    expect(await app.substrate!.installedImage(target.volumeResourceId)).toBe('ubuntu-24.04');
  });
});

describe('Idempotency-Key', () => {
  it('answers a retry with the first answer and starts one rebuild; another body under the key is 422', async () => {
    const key = randomUUID();
    const first = await reinstall(owner, { confirm: true, os_image: 'debian-12' }, vps, key);
    const again = await reinstall(owner, { confirm: true, os_image: 'debian-12' }, vps, key);
    expect(again).toEqual(first);
    const [{ n }] = await app.sql<[{ n: number }]>`
      select count(*)::int as n from service_operations where id = ${first.operation_id}`;
    expect(n).toBe(1);
    expect(await outcome(reinstall(owner, { confirm: true, os_image: 'ubuntu-24.04' }, vps, key))).toEqual([
      422,
      'idempotency-key-reused',
    ]);
    // The same key from another caller is another key.
    expect(await outcome(reinstall(member, { confirm: true, os_image: 'ubuntu-24.04' }, vps, key))).toEqual([
      409,
      'operation-in-progress',
    ]);
    await awaitOperation(owner.api, vps.serviceInstanceId, first.operation_id);
  });
});

describe('staff suspend a service while it is being rebuilt', () => {
  it('the rebuild ends, and the machine is stopped after it', async () => {
    const target = await provisionService(staff.elevated, { projectId, name: 'Suspended mid-way' });
    const accepted = await reinstall(owner, { confirm: true, os_image: 'ubuntu-24.04' }, target);
    await staff.elevated.adminSubscriptionSuspend({ path: { id: target.subscriptionId } });
    expect((await awaitOperation(owner.api, target.serviceInstanceId, accepted.operation_id)).status).toBe(
      'succeeded',
    );
    await app.worker!.runDue();
    expect((await app.substrate!.unitStatus(target.primaryResourceId)).state).toBe('stopped');
  });
});

describe('an operation whose job is gone', () => {
  it('is queued again (requeue_stranded_operations) and resumes at its recorded phase', async () => {
    const target = await provisionService(staff.elevated, { projectId, name: 'Stranded' });
    // A reinstall that holds the service, recorded in its install phase, whose job the queue lost.
    const id = randomUUID();
    const at = new Date(app.clock.now().getTime() - 10 * 60_000);
    await app.sql`
      insert into service_operations (id, service_instance_id, resource_id, kind, status, phase, progress_percent,
                                      input, created_at, updated_at, started_at)
      values (${id}, ${target.serviceInstanceId}, ${target.primaryResourceId}, 'reinstall', 'running', 'install', 50,
              ${app.sql.json({ os_image: 'ubuntu-24.04' })}, ${at}, ${at}, ${at})`;
    await app.sql`
      insert into service_leases (service_instance_id, operation_id, acquired_at) values (${target.serviceInstanceId}, ${id}, ${at})`;
    expect(await outcome(reinstall(owner, { confirm: true, os_image: 'debian-12' }, target))).toEqual([
      409,
      'operation-in-progress',
    ]);
    await app.worker!.run('requeue_stranded_operations');
    expect((await awaitOperation(owner.api, target.serviceInstanceId, id)).status).toBe('succeeded');
    expect(await app.substrate!.installedImage(target.volumeResourceId)).toBe('ubuntu-24.04');
    // The service is free again.
    const next = await reinstall(owner, { confirm: true, os_image: 'debian-12' }, target);
    expect((await awaitOperation(owner.api, target.serviceInstanceId, next.operation_id)).status).toBe(
      'succeeded',
    );
  });
});
