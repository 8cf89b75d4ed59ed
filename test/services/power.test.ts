// POST /service-instances/{id}/power (DECISIONS.md §6 "Power"), end to end on the local substrate: stop,
// start and restart as operations holding the service, the unit contract draining before a stop, the
// service's and resources' statuses following what the units do (and staying so through reconcile and a
// suspension), every refusal changing nothing, the lease, Idempotency-Key and the audit.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { awaitOperation, provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let staff: Staff;
let owner: Caller;
let member: Caller;
let billing: Caller;
let stranger: Caller;
let orgId: string;
let projectId: string;
let web: Provisioned;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  staff = await staffMember(app, smtp, 'pw-staff', ['manage_services']);
  [owner, member, billing, stranger] = await Promise.all([
    signedIn(app, smtp, 'pw-owner'),
    signedIn(app, smtp, 'pw-member'),
    signedIn(app, smtp, 'pw-billing'),
    signedIn(app, smtp, 'pw-stranger'),
  ]);
  orgId = (
    await owner.api.organizationCreate({ body: { name: 'Power', slug: `power-${Date.now().toString(36)}` } })
  ).id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: member.userId, role: 'member' } });
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: billing.userId, role: 'billing' } });
  projectId = (await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Power', slug: 'power' } }))
    .id;
  web = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Site' });
}, 120_000);
afterAll(async () => {
  await app.close();
  await smtp.close();
});

type Action = 'start' | 'stop' | 'restart';
const power = (c: Caller, action: Action, target = web, key?: string) =>
  c.api.serviceInstancePower({
    path: { id: target.serviceInstanceId },
    body: { action },
    ...(key ? { header: { 'Idempotency-Key': key } } : {}),
  });

/** Starts the action and waits for it; throws unless it succeeded. */
async function powered(c: Caller, action: Action, target = web) {
  const accepted = await power(c, action, target);
  const op = await awaitOperation(c.api, target.serviceInstanceId, accepted.operation_id, 60_000);
  expect(op).toMatchObject({ kind: action, status: 'succeeded', progress_percent: 100, error: null });
  return { accepted, op };
}

/** What a refusal must leave alone: the service, its resources, its unit and its operations. */
async function state(target = web) {
  const [service] =
    await app.sql`select status, power from service_instances where id = ${target.serviceInstanceId}`;
  const resources = await app.sql`
    select id, status, signal_generation from service_resources where service_instance_id = ${target.serviceInstanceId} order by id`;
  const [{ n }] = await app.sql<[{ n: number }]>`
    select count(*)::int as n from service_operations where service_instance_id = ${target.serviceInstanceId}`;
  return {
    service,
    resources,
    ops: n,
    unit: (await app.substrate!.unitStatus(target.primaryResourceId)).state,
  };
}

const statuses = async (target = web) => ({
  service: (await owner.api.serviceInstanceGet({ path: { id: target.serviceInstanceId } })).status,
  resources: Object.fromEntries(
    (await owner.api.serviceInstanceResourceList({ path: { id: target.serviceInstanceId } })).resources.map(
      (r) => [r.kind, r.status],
    ),
  ),
});

describe('stop, start, restart', () => {
  it('stops: the contract drains, the unit stops, and the service reads stopped until started', async () => {
    const before = await app.substrate!.readUnitSignal(web.primaryResourceId);
    const { accepted, op } = await powered(member, 'stop');
    expect(accepted).toEqual({
      operation_id: expect.any(String),
      service_instance_id: web.serviceInstanceId,
      action: 'stop',
    });
    expect(op.phase).toBe('stop');
    const contract = await app.substrate!.readUnitSignal(web.primaryResourceId);
    expect(contract!.draining).toBe('stop');
    expect(contract!.generation).toBeGreaterThan(before!.generation);
    expect((await app.substrate!.unitStatus(web.primaryResourceId)).state).toBe('stopped');
    expect(await statuses()).toEqual({
      service: 'stopped',
      resources: { workload: 'stopped', volume: 'stopped' },
    });

    // The platform keeps it stopped: the periodic reconcile does not start it again.
    await app.worker!.run('reconcile_units');
    expect((await app.substrate!.unitStatus(web.primaryResourceId)).state).toBe('stopped');
    // Stopping a stopped service is accepted and changes nothing.
    await powered(owner, 'stop');
    expect(await statuses()).toEqual({
      service: 'stopped',
      resources: { workload: 'stopped', volume: 'stopped' },
    });
  });

  it('starts: a contract that no longer drains, acknowledged, and the service reads running', async () => {
    const { op } = await powered(owner, 'start');
    expect(op.phase).toBe('start');
    const contract = await app.substrate!.readUnitSignal(web.primaryResourceId);
    expect(contract!.draining).toBe(false);
    expect(await app.substrate!.unitStatus(web.primaryResourceId)).toMatchObject({
      state: 'running',
      observedGeneration: contract!.generation,
      lastError: null,
    });
    expect(await statuses()).toEqual({
      service: 'running',
      resources: { workload: 'running', volume: 'running' },
    });
  });

  it('restarts: stop then start, through both phases', async () => {
    const before = await app.substrate!.readUnitSignal(web.primaryResourceId);
    const accepted = await power(owner, 'restart');
    const seen = new Set<string>();
    const op = await owner.api.waitForOperation(web.serviceInstanceId, accepted.operation_id, {
      intervalMs: 10,
      maxIntervalMs: 10,
      signal: AbortSignal.timeout(60_000),
      onProgress: (o) => void (o.phase && seen.add(o.phase)),
    });
    expect(op).toMatchObject({ kind: 'restart', status: 'succeeded', phase: 'start' });
    expect([...seen]).toEqual(['stop', 'start'].filter((p) => seen.has(p)));
    const after = await app.substrate!.readUnitSignal(web.primaryResourceId);
    // Two contracts written: draining for the stop, then running again.
    expect(after!.generation).toBe(before!.generation + 2);
    expect(after!.draining).toBe(false);
    expect(await statuses()).toEqual({
      service: 'running',
      resources: { workload: 'running', volume: 'running' },
    });
  });

  it('audits each accepted action', async () => {
    const actions = (await auditEntries(app, orgId)).map((e) => e.action);
    expect(actions).toEqual(
      expect.arrayContaining(['service.power_stop', 'service.power_start', 'service.power_restart']),
    );
  });
});

describe('refused, changing nothing', () => {
  it('an unknown action is 400 invalid-request', async () => {
    const before = await state();
    const res = await fetch(`${app.baseUrl}/api/v2/service-instances/${web.serviceInstanceId}/power`, {
      method: 'POST',
      headers: { authorization: owner.token, 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'hibernate' }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe('invalid-request');
    expect(await state()).toEqual(before);
  });

  it('anyone who may not change the service gets the 404 of an unknown id', async () => {
    const before = await state();
    const unknown = await outcome(
      owner.api.serviceInstancePower({ path: { id: randomUUID() }, body: { action: 'stop' } }),
    );
    expect(unknown).toEqual([404, 'not-found']);
    expect(await outcome(power(billing, 'stop'))).toEqual(unknown);
    expect(await outcome(power(stranger, 'stop'))).toEqual(unknown);
    expect(await state()).toEqual(before);
  });

  it('another operation holding the service: 409 operation-in-progress', async () => {
    // A backup holding the service, as the backup feature takes it: an operation row and the lease.
    const holder = randomUUID();
    const now = app.clock.now();
    await app.sql`
      insert into service_operations (id, service_instance_id, kind, status, phase, created_at, updated_at, started_at)
      values (${holder}, ${web.serviceInstanceId}, 'backup', 'running', 'snapshot', ${now}, ${now}, ${now})`;
    await app.sql`insert into service_leases (service_instance_id, operation_id, acquired_at) values (${web.serviceInstanceId}, ${holder}, ${now})`;
    const before = await state();
    expect(await outcome(power(owner, 'stop'))).toEqual([409, 'operation-in-progress']);
    expect(await state()).toEqual(before);
    await app.sql`delete from service_leases where operation_id = ${holder}`;
    await app.sql`update service_operations set status = 'succeeded', completed_at = ${now} where id = ${holder}`;
  });

  it('of parallel requests exactly one starts; the others are 409', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => outcome(power(owner, 'restart'))));
    expect(answers.filter((a) => a === 'ok')).toHaveLength(1);
    expect(answers.filter((a) => a !== 'ok')).toEqual(Array(7).fill([409, 'operation-in-progress']));
    const [op] = await app.sql<{ id: string }[]>`
      select id from service_operations where service_instance_id = ${web.serviceInstanceId} and status in ('queued', 'running')`;
    await awaitOperation(owner.api, web.serviceInstanceId, op!.id, 60_000);
  });

  it('a suspended subscription: 422 subscription-not-serviceable; a stopped service stays stopped through suspend and resume', async () => {
    const s = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Paused' });
    await powered(owner, 'stop', s);
    await staff.elevated.adminSubscriptionSuspend({ path: { id: s.subscriptionId } });
    await app.worker!.runDue();
    const before = await state(s);
    expect(before.service).toEqual({ status: 'suspended', power: 'off' });
    expect(await outcome(power(owner, 'start', s))).toEqual([422, 'subscription-not-serviceable']);
    expect(await state(s)).toEqual(before);

    await staff.elevated.adminSubscriptionResume({ path: { id: s.subscriptionId } });
    await app.worker!.runDue();
    expect(await statuses(s)).toEqual({
      service: 'stopped',
      resources: { workload: 'stopped', volume: 'stopped' },
    });
    expect((await app.substrate!.unitStatus(s.primaryResourceId)).state).toBe('stopped');
  });
});

describe('Idempotency-Key', () => {
  it('answers a retry with the first answer and starts one operation; another body under the key is 422', async () => {
    const key = randomUUID();
    const first = await power(owner, 'restart', web, key);
    expect(await power(owner, 'restart', web, key)).toEqual(first);
    expect(await outcome(power(owner, 'stop', web, key))).toEqual([422, 'idempotency-key-reused']);
    const [{ n }] = await app.sql<[{ n: number }]>`
      select count(*)::int as n from service_operations where service_instance_id = ${web.serviceInstanceId} and status in ('queued', 'running')`;
    expect(n).toBe(1);
    await awaitOperation(owner.api, web.serviceInstanceId, first.operation_id, 60_000);
  });
});
