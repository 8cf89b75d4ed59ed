// The crontab: each tick of a periodic task is scheduled once however many workers run, and the
// shipped periodic tasks are registered with valid schedules.
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { connect, type Sql } from '../../server/src/db/client.js';
import type { PeriodicTask } from '../../server/src/jobs/task.js';
import { PERIODIC_TASKS } from '../../server/src/tasks.js';
import { createTestDatabase } from '../support/app.js';
import { testWorker, type TestWorker } from './support.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: Sql;
const workers: TestWorker[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  sql = connect(db.url, { max: 4 });
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});
afterAll(async () => {
  await sql.end({ timeout: 1 });
  await db.drop();
});

const MINUTE = 60_000;

it('two workers starting together run a missed tick once', async () => {
  const runs: { ts: string; backfilled: boolean }[] = [];
  const tick: PeriodicTask = {
    cron: '* * * * *',
    backfillMs: 10 * MINUTE,
    async run(payload) {
      runs.push((payload as { _cron: { ts: string; backfilled: boolean } })._cron);
    },
  };
  // The crontab knew the task and last ran it at the start of the minute before this one, so the tick
  // at the start of this minute was missed (graphile-worker's own table: how else to say "missed").
  const thisMinute = Math.floor(Date.now() / MINUTE) * MINUTE;
  await sql`
    insert into graphile_worker._private_known_crontabs (identifier, known_since, last_execution)
    values ('tick', ${new Date(thisMinute - 10 * MINUTE)}, ${new Date(thisMinute - MINUTE)})`;

  const [a, b] = await Promise.all(
    [1, 2].map(() => testWorker(db.url, { tasks: { tick }, periodic: true, concurrency: 2 })),
  );
  workers.push(a!, b!);
  await Promise.all([a!.runDue(), b!.runDue()]);

  // Each tick once. (Should a minute have begun while the test ran, its tick is there once too.)
  const ticks = runs.map((r) => r.ts);
  expect(new Set(ticks).size).toBe(ticks.length);
  expect(ticks).toContain(new Date(thisMinute).toISOString());
  expect(runs.find((r) => r.ts === new Date(thisMinute).toISOString())!.backfilled).toBe(true);
  const [known] = await sql<{ last_execution: Date }[]>`
    select last_execution from graphile_worker._private_known_crontabs where identifier = 'tick'`;
  expect(known!.last_execution.getTime()).toBe(Math.max(...ticks.map((t) => Date.parse(t))));
});

it('registers every shipped periodic task under its name, each on a valid schedule', async () => {
  // A pattern graphile-worker can not parse makes startWorker throw.
  const w = await testWorker(db.url, { periodic: true });
  workers.push(w);
  const rows = await sql<
    { identifier: string }[]
  >`select identifier from graphile_worker._private_known_crontabs`;
  expect(
    rows
      .map((r) => r.identifier)
      .filter((i) => i !== 'tick')
      .sort(),
  ).toEqual(Object.keys(PERIODIC_TASKS).sort());
});
