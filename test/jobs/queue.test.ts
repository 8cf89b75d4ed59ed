// The queue itself (server/src/jobs/): a job belongs to the transaction that adds it, runs within
// milliseconds of the commit, is retried with backoff when it throws, and a named queue runs its
// jobs one at a time across workers. Real PostgreSQL, real graphile-worker runners, tasks of the
// test's own.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Sql } from '../../server/src/db/client.js';
import { enqueue } from '../../server/src/jobs/queue.js';
import { addJob } from '../../server/src/jobs/store.js';
import { periodicJobOptions, type PeriodicTask, type TaskDefinition } from '../../server/src/jobs/task.js';
import { createTestDatabase } from '../support/app.js';
import { eventually, gate, testWorker, type TestWorker } from './support.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: Sql;
const workers: TestWorker[] = [];
const cleanups: (() => void)[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  sql = connect(db.url, { max: 4 });
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  await Promise.all(workers.splice(0).map((w) => w.stop()));
  await sql`select graphile_worker.permanently_fail_jobs(array(select id from graphile_worker.jobs), 'test over')`;
});
afterAll(async () => {
  await sql.end({ timeout: 1 });
  await db.drop();
});

async function worker(
  tasks: Record<string, TaskDefinition | PeriodicTask>,
  options: Parameters<typeof testWorker>[1] = {},
) {
  const w = await testWorker(db.url, { tasks, ...options });
  workers.push(w);
  return w;
}

/** A task that records each payload it runs with. */
function recorder() {
  const runs: unknown[] = [];
  const task: TaskDefinition = {
    async run(payload) {
      runs.push(payload);
    },
  };
  return { runs, task };
}

async function jobs(task: string) {
  return sql<
    {
      id: string;
      attempts: number;
      max_attempts: number;
      last_error: string | null;
      wait_ms: number;
      key: string | null;
    }[]
  >`
    select id, attempts, max_attempts, last_error, key, (extract(epoch from run_at - now()) * 1000)::float8 as wait_ms
    from graphile_worker.jobs where task_identifier = ${task} order by id`;
}

describe('enqueue in the caller’s transaction', () => {
  it('a job added in a transaction that rolls back never exists; one that commits runs within a second', async () => {
    // send_mail is a task enqueue() knows; this worker runs its own handler under that name.
    const { runs, task } = recorder();
    const w = await worker({ send_mail: task });
    const id = '00000000-0000-4000-8000-000000000001';

    await expect(
      sql.begin(async (tx) => {
        await enqueue(tx, 'send_mail', { id });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await w.runDue()).toBe(0);
    expect(await jobs('send_mail')).toEqual([]);
    expect(runs).toEqual([]);

    const started = Date.now();
    await sql.begin((tx) => enqueue(tx, 'send_mail', { id }));
    // No runDue: the commit's NOTIFY wakes the worker (it polls once a minute).
    await eventually(async () => runs.length === 1, 1000);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(runs).toEqual([{ id }]);
    await eventually(async () => (await jobs('send_mail')).length === 0);
  });

  it('a job is not visible to workers before its transaction commits', async () => {
    const { runs, task } = recorder();
    const w = await worker({ send_mail: task });
    const inside = gate();
    const committed = sql.begin(async (tx) => {
      await enqueue(tx, 'send_mail', { id: '00000000-0000-4000-8000-000000000002' });
      await inside.promise;
    });
    expect(await w.runDue()).toBe(0);
    expect(runs).toEqual([]);
    inside.open();
    await committed;
    await w.runDue();
    expect(runs).toHaveLength(1);
  });

  it('a job key keeps one waiting job: adding it again replaces the waiting one', async () => {
    const { runs, task } = recorder();
    const w = await worker({ keyed: task });
    await addJob(sql, 'keyed', { n: 1 }, { jobKey: 'k', delayMs: 60_000 });
    await addJob(sql, 'keyed', { n: 2 }, { jobKey: 'k', delayMs: 60_000 });
    const waiting = await jobs('keyed');
    expect(waiting).toHaveLength(1);
    expect(waiting[0]!.wait_ms).toBeGreaterThan(55_000);
    await w.runDue();
    expect(runs).toEqual([{ n: 2 }]);
  });
});

describe('failures', () => {
  it('a job that throws is retried with exponential backoff, and runs again until it succeeds', async () => {
    let calls = 0;
    const w = await worker({
      flaky: {
        async run() {
          calls += 1;
          if (calls === 1) throw new Error('the first run fails');
        },
      },
    });
    await addJob(sql, 'flaky', {}, { maxAttempts: 3 });
    // Taken at once (NOTIFY); runDue would bring the retry forward, so wait for the failure instead.
    await eventually(async () => (await jobs('flaky'))[0]?.last_error);
    const [failed, ...others] = await jobs('flaky');
    expect(others).toEqual([]);
    expect(failed).toMatchObject({ attempts: 1, max_attempts: 3, last_error: 'the first run fails' });
    // graphile-worker waits exp(attempts) seconds: e¹ ≈ 2.7 s after the first failure.
    expect(failed!.wait_ms).toBeGreaterThan(2_000);
    expect(failed!.wait_ms).toBeLessThanOrEqual(2_800);
    expect(w.lines.some((l) => l.level === 50 && String(l.msg).includes('the first run fails'))).toBe(true);

    await w.runDue(); // the backoff is over
    expect(calls).toBe(2);
    expect(await jobs('flaky')).toEqual([]);
  });

  it('gives a job up after its maxAttempts, and keeps it with its last error', async () => {
    let calls = 0;
    const w = await worker({
      broken: {
        async run() {
          calls += 1;
          throw new Error(`failure ${calls}`);
        },
      },
    });
    await addJob(sql, 'broken', {}, { maxAttempts: 2 });
    for (let i = 0; i < 4; i++) await w.runDue();
    expect(calls).toBe(2);
    expect(await jobs('broken')).toMatchObject([{ attempts: 2, max_attempts: 2, last_error: 'failure 2' }]);
  });

  it('run() reports a task that threw', async () => {
    const w = await worker({
      broken: {
        async run() {
          throw new Error('nope');
        },
      },
    });
    await expect(w.run('broken')).rejects.toThrow(/broken failed: nope/);
  });
});

describe('one at a time', () => {
  it('jobs of one named queue run one at a time across two workers; other jobs do not wait for them', async () => {
    let running = 0;
    let most = 0;
    const done: number[] = [];
    const slow: TaskDefinition = {
      async run(payload) {
        running += 1;
        most = Math.max(most, running);
        await new Promise((r) => setTimeout(r, 30));
        running -= 1;
        done.push((payload as { n: number }).n);
      },
    };
    const { runs, task: fast } = recorder();
    const a = await worker({ slow, fast }, { concurrency: 3 });
    const b = await worker({ slow, fast }, { concurrency: 3 });
    for (let n = 1; n <= 5; n++) await addJob(sql, 'slow', { n }, { queueName: 'one-at-a-time' });
    await addJob(sql, 'fast', {}, {});
    await Promise.all([a.runDue(), b.runDue()]);
    expect(done).toHaveLength(5);
    expect(runs).toHaveLength(1);
    expect(most).toBe(1);
    expect(done).toEqual([1, 2, 3, 4, 5]); // a named queue also keeps its order
  });

  it('a periodic task never overlaps itself: ticks that come while one runs wait as one job', async () => {
    const held = gate();
    const started: unknown[] = [];
    const w = await worker({
      tick: {
        cron: '0 0 1 1 *',
        backfillMs: 0,
        async run(payload) {
          started.push(payload);
          if (started.length === 1) await held.promise;
        },
      },
    });
    await addJob(sql, 'tick', { n: 1 }, periodicJobOptions('tick'));
    await eventually(async () => started.length === 1);
    // Three more ticks while the first runs: one job waits, holding the latest.
    for (let n = 2; n <= 4; n++) await addJob(sql, 'tick', { n }, periodicJobOptions('tick'));
    const waiting = (await jobs('tick')).filter((j) => j.attempts < j.max_attempts);
    expect(waiting).toHaveLength(1);
    expect(waiting[0]!.key).toBe('periodic:tick');
    expect(started).toHaveLength(1);
    held.open();
    await w.runDue();
    expect(started).toEqual([{ n: 1 }, { n: 4 }]);
  });
});

describe('liveness', () => {
  it('a worker whose liveness connection broke takes its lock again, so another worker leaves its job alone', async () => {
    const held = gate();
    let runs = 0;
    const slow: TaskDefinition = {
      async run() {
        runs += 1;
        await held.promise;
      },
    };
    const a = await worker({ slow });
    cleanups.push(held.open); // before the worker stops, or it waits for the job forever
    await addJob(sql, 'slow', {}, {});
    await eventually(async () => runs === 1);
    const [terminated] = await sql<{ n: number }[]>`
      select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
      where datname = current_database() and application_name = 'svc-control-plane worker liveness'`;
    expect(terminated!.n).toBe(1);

    expect(await a.recover()).toBe(0); // and the process lives on
    const b = await worker({ slow });
    expect(await b.recover()).toBe(0);
    const [job] = await sql<
      { locked_by: string }[]
    >`select locked_by from graphile_worker.jobs where task_identifier = 'slow'`;
    expect(job!.locked_by).toBe(a.poolId);
    expect(a.lines.some((l) => l.msg === 'job worker lost its liveness connection; locking again')).toBe(
      true,
    );

    held.open();
    await a.runDue();
    expect(runs).toBe(1);
  });
});
