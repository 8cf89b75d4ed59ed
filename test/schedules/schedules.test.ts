// Schedules (DECISIONS.md §8 "Schedules") through the real stack on the local substrate, on a frozen
// clock (the worker's task is run by hand, never waited for): CRUD with its audit, next runs across
// DST, every refusal changing nothing, a due run started once as the operation its action starts,
// skipped behind another operation, missed runs at start, two claimers racing, backup rotation, a
// console line reaching a running game's console.
import { randomUUID } from 'node:crypto';
import { createClient, type SvcClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../server/src/db/client.js';
import { runDueSchedules } from '../../server/src/features/schedules/run.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { taskContextOf } from '../support/task-context.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { awaitOperation, provisionService, serviceCustomer, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

const START = new Date('2026-11-21T12:00:00.000Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let app: TestApp;
let smtp: TestSmtp;
let owner: Caller;
let billing: Caller;
/** The owner's API token: the clock moves by days here, further than a session token lives. */
let api: SvcClient;
let orgId: string;
let web: Provisioned;
/** A game with a console, for the command action. */
let game: Provisioned;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  app.clock.set(START);
  const customer = await serviceCustomer(app, smtp, 'sched');
  owner = customer.owner;
  orgId = customer.orgId;
  billing = await signedIn(app, smtp, 'sched-billing');
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: billing.userId, role: 'billing' } });
  const minted = await owner.api.meApiTokenCreate({
    body: {
      name: 'schedules',
      authorization: {
        grants: ['orders.manage', 'services.read'].map((capability) => ({
          capability,
          scope: { kind: 'all' as const },
        })),
      },
    },
  });
  api = createClient({ baseUrl: app.baseUrl, token: minted.secret, retries: 0 });
  [web, game] = await Promise.all([
    provisionService(customer.staff.elevated, {
      projectId: customer.projectId,
      productSlug: 'web-app',
      name: 'Shop',
    }),
    provisionService(customer.staff.elevated, {
      projectId: customer.projectId,
      productSlug: 'arena-game',
      name: 'Arena',
    }),
  ]);
}, 180_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

const at = () => ({ id: web.serviceInstanceId });
type CreateBody = Parameters<SvcClient['scheduleCreate']>[0]['body'];
const create = (body: CreateBody, c: SvcClient = api) => c.scheduleCreate({ path: at(), body });
const get = (id: string) => api.scheduleGet({ path: { ...at(), schedule_id: id } });
const remove = (id: string) => api.scheduleDelete({ path: { ...at(), schedule_id: id } });
const runDue = () => app.worker!.run('run_due_schedules');

async function removeAll() {
  for (const s of (await api.scheduleList({ path: at() })).data) await remove(s.id);
}

async function operationCount(serviceId = web.serviceInstanceId): Promise<number> {
  const [row] = await app.sql<{ n: number }[]>`
    select count(*)::int as n from service_operations where service_instance_id = ${serviceId}`;
  return row!.n;
}

/** Every row a schedule request could write: what a refusal must leave alone. */
async function state() {
  const rows = await app.sql`select * from service_schedules order by id`;
  const [audit] = await app.sql<{ n: number }[]>`select count(*)::int as n from audit_entries`;
  return { rows, audit: audit!.n };
}

describe('create, read, change, delete', () => {
  it('creates with its next run in its time zone, lists, changes, deletes; each audited', async () => {
    app.clock.set(START);
    const made = await create({
      name: '  Nightly  ',
      cron: '30 2 * * *',
      timezone: 'Europe/Berlin',
      action: 'backup',
      keep: 3,
    });
    expect(made).toEqual({
      id: expect.any(String),
      name: 'Nightly',
      cron: '30 2 * * *',
      timezone: 'Europe/Berlin',
      action: 'backup',
      command: null,
      keep: 3,
      enabled: true,
      // 02:30 in Berlin in November (CET, UTC+1).
      next_run_at: '2026-11-22T01:30:00.000Z',
      last_run_at: null,
      last_status: null,
      last_error: null,
      last_operation_id: null,
      created_at: START.toISOString(),
    });
    expect(await api.scheduleList({ path: at() })).toEqual({ data: [made], max_schedules: 10 });
    expect(await get(made.id)).toEqual(made);

    // A new action drops the keep it takes no more; disabled, there is no next run.
    const restart = await api.scheduleUpdate({
      path: { ...at(), schedule_id: made.id },
      body: { action: 'restart' },
    });
    expect(restart).toMatchObject({ action: 'restart', keep: null, next_run_at: '2026-11-22T01:30:00.000Z' });
    const off = await api.scheduleUpdate({
      path: { ...at(), schedule_id: made.id },
      body: { enabled: false },
    });
    expect(off).toMatchObject({ enabled: false, next_run_at: null });
    const utc = await api.scheduleUpdate({
      path: { ...at(), schedule_id: made.id },
      body: { enabled: true, timezone: 'UTC', cron: '0 */6 * * *' },
    });
    expect(utc).toMatchObject({ enabled: true, next_run_at: '2026-11-21T18:00:00.000Z' });

    await remove(made.id);
    expect(await outcome(get(made.id))).toEqual([404, 'not-found']);
    const audited = (await auditEntries(app, orgId)).filter((e) => e.target_id === made.id);
    expect(audited.map((e) => e.action)).toEqual([
      'schedule.created',
      'schedule.updated',
      'schedule.updated',
      'schedule.updated',
      'schedule.deleted',
    ]);
    expect(audited.every((e) => e.actor_user_id === owner.userId && e.target_type === 'schedule')).toBe(true);
  });

  it('computes next runs across DST as croner documents: after a spring gap, once in an autumn repeat', async () => {
    app.clock.set('2026-03-28T12:00:00.000Z');
    const spring = await create({
      name: 'spring',
      cron: '30 2 * * *',
      timezone: 'Europe/Berlin',
      action: 'start',
    });
    // 02:30 does not exist on 29 March in Berlin: the run is at the first time after the gap (03:00 CEST).
    expect(spring.next_run_at).toBe('2026-03-29T01:00:00.000Z');
    app.clock.set('2026-10-24T12:00:00.000Z');
    const autumn = await create({
      name: 'autumn',
      cron: '30 2 * * *',
      timezone: 'Europe/Berlin',
      action: 'start',
    });
    expect(autumn.next_run_at).toBe('2026-10-25T00:30:00.000Z');
    // Moved past that first 02:30 (CEST), the next is the next day's, not the repeated 02:30 (CET).
    app.clock.set('2026-10-25T00:30:00.000Z');
    const again = await api.scheduleUpdate({
      path: { ...at(), schedule_id: autumn.id },
      body: { name: 'autumn 2' },
    });
    expect(again.next_run_at).toBe('2026-10-26T01:30:00.000Z');
    app.clock.set(START);
    await removeAll();
  });
});

describe('refusals change nothing', () => {
  const base = { name: 'x', cron: '0 3 * * *', action: 'start' } as const;
  const cases: [string, Record<string, unknown>, [number, string]][] = [
    ['six fields', { cron: '0 0 3 * * *' }, [400, 'invalid-field-value']],
    ['a nickname', { cron: '@daily' }, [400, 'invalid-field-value']],
    ['a minute out of range', { cron: '61 * * * *' }, [400, 'invalid-field-value']],
    ['a date that never comes', { cron: '0 0 31 2 *' }, [400, 'invalid-field-value']],
    ['an unknown time zone', { timezone: 'Mars/Olympus' }, [400, 'invalid-field-value']],
    ['an offset for a time zone', { timezone: '+01:00' }, [400, 'invalid-field-value']],
    ['a command without its line', { action: 'command' }, [400, 'invalid-field-value']],
    ['a command for a power action', { command: 'say hi' }, [400, 'invalid-field-value']],
    ['keep for a power action', { keep: 2 }, [400, 'invalid-field-value']],
    ['a backup without keep', { action: 'backup' }, [400, 'invalid-field-value']],
    ['keep above the backups a volume holds', { action: 'backup', keep: 6 }, [400, 'invalid-field-value']],
    ['a blank name', { name: '   ' }, [400, 'invalid-field-value']],
    ['an unknown field', { colour: 'red' }, [400, 'invalid-request']],
    ['an unknown action', { action: 'reboot' }, [400, 'invalid-request']],
    [
      'a command on a product without a console',
      { action: 'command', command: 'say hi' },
      [422, 'schedule-action-unsupported'],
    ],
  ];
  it.each(cases)('%s', async (_, change, expected) => {
    const before = await state();
    expect(await outcome(create({ ...base, ...change } as CreateBody))).toEqual(expected);
    expect(await state()).toEqual(before);
  });

  it('a bad change leaves the schedule as it was; Billing and strangers get the 404 of an unknown id', async () => {
    const s = await create({ ...base });
    const before = await state();
    const path = { ...at(), schedule_id: s.id };
    expect(await outcome(api.scheduleUpdate({ path, body: { timezone: 'Nowhere/Land' } }))).toEqual([
      400,
      'invalid-field-value',
    ]);
    expect(await outcome(api.scheduleUpdate({ path, body: { action: 'backup' } }))).toEqual([
      400,
      'invalid-field-value',
    ]);
    expect(await outcome(billing.api.scheduleUpdate({ path, body: { name: 'mine' } }))).toEqual([
      404,
      'not-found',
    ]);
    expect(await outcome(billing.api.scheduleDelete({ path }))).toEqual([404, 'not-found']);
    expect(await outcome(billing.api.scheduleList({ path: at() }))).toEqual([404, 'not-found']);
    expect(await outcome(billing.api.scheduleCreate({ path: at(), body: base }))).toEqual([404, 'not-found']);
    expect(await outcome(api.scheduleGet({ path: { ...at(), schedule_id: randomUUID() } }))).toEqual([
      404,
      'not-found',
    ]);
    expect(await state()).toEqual(before);
    await remove(s.id);
  });

  it('the 11th schedule is 422 quota-exceeded with details.limit, even when asked for at once', async () => {
    const answers = await Promise.all(
      Array.from({ length: 14 }, (_, i) => outcome(create({ ...base, name: `s${i}` }))),
    );
    expect(answers.filter((a) => a === 'ok')).toHaveLength(10);
    const before = await state();
    const e = await create({ ...base, name: 'eleventh' }).catch((err: unknown) => err);
    expect(e).toMatchObject({ status: 422, code: 'quota-exceeded', problem: { details: { limit: 10 } } });
    expect(await state()).toEqual(before);
    await removeAll();
  });
});

describe('runs', () => {
  it('runs a due schedule once, as the operation its action starts, audited with no user as actor', async () => {
    app.clock.set(START);
    const s = await create({ name: 'restart', cron: '*/5 * * * *', action: 'restart' });
    expect(s.next_run_at).toBe('2026-11-21T12:05:00.000Z');
    const ops = await operationCount();
    await runDue();
    expect(await operationCount()).toBe(ops);

    app.clock.set('2026-11-21T12:05:00.000Z');
    await runDue();
    await runDue();
    expect(await operationCount()).toBe(ops + 1);
    const ran = await get(s.id);
    expect(ran).toMatchObject({
      last_run_at: '2026-11-21T12:05:00.000Z',
      next_run_at: '2026-11-21T12:10:00.000Z',
      last_operation_id: expect.any(String),
    });
    const op = await awaitOperation(api, web.serviceInstanceId, ran.last_operation_id!, 60_000);
    expect(op).toMatchObject({ kind: 'restart', status: 'succeeded' });
    expect(await get(s.id)).toMatchObject({ last_status: 'succeeded', last_error: null });
    const audited = (await auditEntries(app, orgId)).filter((e) => e.action === 'service.power_restart');
    expect(audited).toEqual([
      expect.objectContaining({ actor_user_id: null, target_id: web.serviceInstanceId }),
    ]);
    await remove(s.id);
  });

  it('is skipped when another operation holds the service, starting nothing', async () => {
    app.clock.set(START);
    const s = await create({ name: 'stop', cron: '*/5 * * * *', action: 'stop' });
    const holder = randomUUID();
    await app.sql`
      insert into service_operations (id, service_instance_id, kind, status, input, created_at, updated_at, started_at)
      values (${holder}, ${web.serviceInstanceId}, 'import', 'running', '{}', ${START}, ${START}, ${START})`;
    await app.sql`insert into service_leases (service_instance_id, operation_id, acquired_at)
                  values (${web.serviceInstanceId}, ${holder}, ${START})`;
    const ops = await operationCount();
    app.clock.set('2026-11-21T12:05:00.000Z');
    await runDue();
    expect(await operationCount()).toBe(ops);
    expect(await get(s.id)).toMatchObject({
      last_status: 'skipped',
      last_error: expect.stringContaining(holder),
      last_operation_id: null,
      last_run_at: '2026-11-21T12:05:00.000Z',
      next_run_at: '2026-11-21T12:10:00.000Z',
    });
    await app.sql`delete from service_leases where operation_id = ${holder}`;
    await app.sql`update service_operations set status = 'cancelled', completed_at = ${START} where id = ${holder}`;
    await remove(s.id);
  });

  it('after downtime runs a missed run once when under an hour late, and passes over one later than that', async () => {
    app.clock.set(START);
    const hourly = await create({ name: 'hourly', cron: '0 * * * *', action: 'start' });
    const daily = await create({ name: 'daily', cron: '10 11 * * *', action: 'start' });
    const ops = await operationCount();
    // Down from 12:00 to 12:30 the next day: 24 hourly runs missed, the latest 30 minutes ago; the
    // daily one 80 minutes ago.
    app.clock.set('2026-11-22T12:30:00.000Z');
    await runDue();
    expect(await operationCount()).toBe(ops + 1);
    const h = await get(hourly.id);
    expect(h).toMatchObject({
      last_run_at: '2026-11-22T12:30:00.000Z',
      next_run_at: '2026-11-22T13:00:00.000Z',
    });
    expect(await get(daily.id)).toMatchObject({
      last_run_at: null,
      last_status: null,
      next_run_at: '2026-11-23T11:10:00.000Z',
    });
    expect((await awaitOperation(api, web.serviceInstanceId, h.last_operation_id!, 60_000)).status).toBe(
      'succeeded',
    );
    await removeAll();
  });

  it('two claimers racing over ten due schedules: each runs once', async () => {
    app.clock.set(START);
    for (let i = 0; i < 10; i++) await create({ name: `race ${i}`, cron: '* * * * *', action: 'start' });
    const pools = [connect(app.databaseUrl, { max: 3 }), connect(app.databaseUrl, { max: 3 })];
    const ctxOf = (sql: (typeof pools)[number]) => taskContextOf(app, { sql });
    try {
      for (let round = 1; round <= 3; round++) {
        const ops = await operationCount();
        app.clock.set(new Date(START.getTime() + round * MINUTE));
        const [a, b] = await Promise.all(pools.map((p) => runDueSchedules(ctxOf(p))));
        const ran = [...a!.ran, ...b!.ran];
        expect(ran).toHaveLength(10);
        expect(new Set(ran).size).toBe(10);
        const { data } = await api.scheduleList({ path: at() });
        expect(data.every((s) => s.last_run_at === app.clock.now().toISOString())).toBe(true);
        // Each run either started its operation or met one holding the service (an operation can end
        // between two claims, so more than one may start); never both, never twice.
        const started = data.filter((s) => s.last_operation_id !== null);
        expect(started.length).toBeGreaterThanOrEqual(1);
        expect(data.filter((s) => s.last_status === 'skipped')).toHaveLength(10 - started.length);
        expect(await operationCount()).toBe(ops + started.length);
        for (const s of started)
          await awaitOperation(api, web.serviceInstanceId, s.last_operation_id!, 60_000);
      }
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
    await removeAll();
  });

  it('a backup schedule keeps its newest `keep` backups, oldest deleted once a new one is ready, never another', async () => {
    app.clock.set(START);
    const volume = { ...at(), resource_id: web.volumeResourceId };
    const manual = await api.backupCreate({ path: volume, body: { name: 'by hand' } });
    await awaitOperation(api, web.serviceInstanceId, manual.operation_id, 60_000);
    const s = await create({ name: 'hourly backup', cron: '0 * * * *', action: 'backup', keep: 2 });
    const made: string[] = [];
    for (let hour = 1; hour <= 3; hour++) {
      app.clock.set(new Date(START.getTime() + hour * HOUR));
      await runDue();
      const ran = await get(s.id);
      const op = await awaitOperation(api, web.serviceInstanceId, ran.last_operation_id!, 60_000);
      expect(op).toMatchObject({ kind: 'backup', status: 'succeeded' });
      expect(await get(s.id)).toMatchObject({ last_status: 'succeeded' });
      const [row] = await app.sql<{ id: string }[]>`
        select id from service_backups where schedule_id = ${s.id} order by created_at desc limit 1`;
      made.push(row!.id);
    }
    const listed = (await api.backupList({ path: volume })).backups.map((b) => b.id).sort();
    expect(listed).toEqual([manual.backup.id, made[1]!, made[2]!].sort());
    const created = (await auditEntries(app, orgId)).filter(
      (e) => e.action === 'backup.created' && made.includes(e.target_id!),
    );
    expect(created).toHaveLength(3);
    expect(created.every((e) => e.actor_user_id === null)).toBe(true);
    await remove(s.id);
    // Its backups stay with the customer.
    expect((await api.backupList({ path: volume })).backups).toHaveLength(3);
  });

  it('a command schedule sends its line to the running game, whose console answers it; no operation starts', async () => {
    app.clock.set(START);
    const gameAt = { id: game.serviceInstanceId };
    const word = `tick-${randomUUID().slice(0, 8)}`;
    const s = await api.scheduleCreate({
      path: gameAt,
      body: { name: 'announce', cron: '*/5 * * * *', action: 'command', command: `say ${word}` },
    });
    const ops = await operationCount(game.serviceInstanceId);
    app.clock.set('2026-11-21T12:05:00.000Z');
    await runDue();
    expect(await api.scheduleGet({ path: { ...gameAt, schedule_id: s.id } })).toMatchObject({
      last_run_at: '2026-11-21T12:05:00.000Z',
      last_status: 'succeeded',
      last_error: null,
      last_operation_id: null,
    });
    // The game server's own answer to `say` (ioq3ded prints the line as said by the console).
    const answer = `console: ${word}`;
    expect(await consoleUntil(game.primaryResourceId, answer)).toContain(answer);
    expect(await operationCount(game.serviceInstanceId)).toBe(ops);
    const sent = (await auditEntries(app, orgId)).filter(
      (e) => e.action === 'service.command_sent' && e.target_id === game.serviceInstanceId,
    );
    expect(sent).toEqual([expect.objectContaining({ actor_user_id: null })]);
    await api.scheduleDelete({ path: { ...gameAt, schedule_id: s.id } });
  });
});

/** What the unit's console shows (scrollback first) once it shows `text`, or after 15 s. */
async function consoleUntil(unitId: string, text: string): Promise<string> {
  const stream = await app.substrate!.openConsole(unitId);
  if (!stream) return '(no console)';
  let seen = '';
  try {
    return await new Promise<string>((resolve) => {
      const timer = setTimeout(() => resolve(seen), 15_000);
      stream.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes(text)) {
          clearTimeout(timer);
          resolve(seen);
        }
      });
    });
  } finally {
    stream.destroy();
  }
}
