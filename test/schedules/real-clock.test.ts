// Schedules on the real clock in real processes (DECISIONS.md §8 "Schedules"): two servers run the job
// worker with its crontab on one data directory; the API is a test app with WORKER=off, so only they
// run jobs. A due schedule both servers' workers race for runs once; a minute schedule runs at its
// minute on its own and starts its operation. The file waits for one real minute at most.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { addJob, wakeWorkers } from '../../server/src/jobs/store.js';
import type { SubstrateDriver } from '../../server/src/substrate/driver.js';
import { createSubstrate } from '../../server/src/substrate/index.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { startJobServer, type ServerProcess } from '../support/job-server.js';
import { auditEntries, type Caller } from '../support/organizations.js';
import { awaitOperation, provisionService, serviceCustomer, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

const ENCRYPTION_KEY = randomBytes(32).toString('base64');
const dataDir = join(process.cwd(), '.tmp', `schedules-${randomUUID()}`);
const MINUTE = 60_000;
/** Racing claims: more jobs than either server has workers (4), so both take some. */
const RACERS = 8;

let smtp: TestSmtp;
let app: TestApp;
let servers: ServerProcess[] = [];
/** The servers' substrate, read from outside: the units they started, stopped at the end. */
let substrate: SubstrateDriver;
let owner: Caller;
let orgId: string;
let web: Provisioned;

beforeAll(async () => {
  await mkdir(dataDir, { recursive: true });
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { WORKER: 'off', SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', ENCRYPTION_KEY },
  });
  app.clock.followRealTime();
  substrate = createSubstrate('local', { dataDir });
  const start = () =>
    startJobServer({
      databaseUrl: app.databaseUrl,
      dataDir,
      encryptionKey: ENCRYPTION_KEY,
      smtpUrl: smtp.url,
      // Debug: graphile-worker's line per completed job says which server ran which job.
      env: { LOG_LEVEL: 'debug' },
    });
  servers = await Promise.all([start(), start()]);
  const customer = await serviceCustomer(app, smtp, 'cron');
  owner = customer.owner;
  orgId = customer.orgId;
  web = await provisionService(customer.staff.elevated, {
    projectId: customer.projectId,
    productSlug: 'web-app',
    name: 'Clockwork',
  });
}, 180_000);

afterAll(async () => {
  // Servers first: a live one would start the units again (reconcile_units).
  await Promise.all(
    servers.map(async (s) => {
      const timer = setTimeout(() => void s.kill9(), 15_000);
      await s.stop();
      clearTimeout(timer);
    }),
  );
  await substrate?.close({ stopUnits: true });
  await rm(dataDir, { recursive: true, force: true });
  await app?.close();
  await smtp?.close();
});

const at = () => ({ id: web.serviceInstanceId });

/** Operations of the service created since `since`, oldest first. */
const operationsSince = (since: Date) =>
  app.sql<{ id: string; kind: string }[]>`
    select id, kind from service_operations
    where service_instance_id = ${web.serviceInstanceId} and created_at >= ${since} order by created_at`;

const powerStarts = async () =>
  (await auditEntries(app, orgId)).filter(
    (e) => e.action === 'service.power_start' && e.target_id === web.serviceInstanceId,
  );

/** Ids of run_due_schedules jobs a server says it completed. */
const completedBy = (server: ServerProcess): Set<string> =>
  new Set([...server.output().matchAll(/Completed task (\d+) \(run_due_schedules/g)].map((m) => m[1]!));

it('two servers racing over one due schedule run it once: one operation, one run recorded', async () => {
  const since = new Date();
  // Due at the moment the racing jobs become takeable; every idle worker of both servers is woken then.
  const dueAt = new Date(Date.now() + 1500);
  // Yearly, at dueAt's minute: a run there is on time (not passed over as over an hour late), and no
  // minute tick makes it due again while this runs.
  const minute = `${dueAt.getUTCMinutes()} ${dueAt.getUTCHours()} ${dueAt.getUTCDate()} ${dueAt.getUTCMonth() + 1} *`;
  const s = await owner.api.scheduleCreate({
    path: at(),
    body: { name: 'race', cron: minute, action: 'start' },
  });
  const audited = (await powerStarts()).length;
  // Due at that minute, an occurrence of its cron, as the claim requires of a run it makes.
  const occurrence = new Date(Math.floor(dueAt.getTime() / MINUTE) * MINUTE);
  await app.sql`update service_schedules set next_run_at = ${occurrence} where id = ${s.id}`;
  const jobs = await Promise.all(
    Array.from({ length: RACERS }, () =>
      addJob(app.sql, 'run_due_schedules', {}, { runAt: dueAt, maxAttempts: 1 }),
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, dueAt.getTime() - Date.now() + 20));
  await wakeWorkers(app.sql, RACERS);
  await expect
    .poll(
      async () =>
        (await app.sql`select 1 from graphile_worker.jobs where id = any(${jobs}::bigint[])`).length,
      { timeout: 30_000, interval: 100 },
    )
    .toBe(0);
  // Every racing job ran in one of the two servers (each usually takes some; which ones is the
  // scheduler's to decide, so it is not required): whoever claimed, the schedule ran once.
  const ranIn = () => servers.flatMap((server) => [...completedBy(server)].filter((id) => jobs.includes(id)));
  await expect.poll(() => ranIn().sort(), { timeout: 5_000 }).toEqual([...jobs].sort());

  const ops = await operationsSince(since);
  expect(ops.map((o) => o.kind)).toEqual(['start']);
  const ran = await owner.api.scheduleGet({ path: { ...at(), schedule_id: s.id } });
  expect(ran.last_operation_id).toBe(ops[0]!.id);
  expect(new Date(ran.next_run_at!).getTime() - dueAt.getTime()).toBeGreaterThan(360 * 86_400_000);
  expect(new Date(ran.last_run_at!).getTime()).toBeGreaterThanOrEqual(occurrence.getTime());
  expect((await awaitOperation(owner.api, web.serviceInstanceId, ops[0]!.id, 60_000)).status).toBe(
    'succeeded',
  );
  expect(await powerStarts()).toHaveLength(audited + 1);
  await owner.api.scheduleDelete({ path: { ...at(), schedule_id: s.id } });
});

it(
  'a minute schedule runs at its minute on the real clock and starts its operation',
  { timeout: 150_000 },
  async () => {
    const since = new Date();
    const s = await owner.api.scheduleCreate({
      path: at(),
      body: { name: 'every minute', cron: '* * * * *', action: 'start' },
    });
    const minute = new Date(s.next_run_at!).getTime();
    expect(minute - since.getTime()).toBeLessThanOrEqual(MINUTE);
    const audited = (await powerStarts()).length;
    // Nobody runs the task by hand here: the servers' crontab does, at the minute.
    let ran = s;
    for (const deadline = minute + 20_000; ran.last_run_at === null;) {
      if (Date.now() > deadline) throw new Error(`no run by ${new Date(deadline).toISOString()}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      ran = await owner.api.scheduleGet({ path: { ...at(), schedule_id: s.id } });
    }
    // Deleted before its next minute: what follows reads the one run.
    await owner.api.scheduleDelete({ path: { ...at(), schedule_id: s.id } });
    const runAt = new Date(ran.last_run_at!).getTime();
    expect(runAt).toBeGreaterThanOrEqual(minute);
    expect(runAt - since.getTime()).toBeLessThanOrEqual(70_000);
    expect(ran.next_run_at).toBe(new Date(minute + MINUTE).toISOString());
    const ops = await operationsSince(since);
    expect(ops.map((o) => o.kind)).toEqual(['start']);
    expect(ran.last_operation_id).toBe(ops[0]!.id);
    expect((await awaitOperation(owner.api, web.serviceInstanceId, ops[0]!.id, 60_000)).status).toBe(
      'succeeded',
    );
    expect(await powerStarts()).toHaveLength(audited + 1);
  },
);
