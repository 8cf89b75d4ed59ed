// All SQL of the job queue: adding jobs, finding the jobs of workers that died, and what tests wait
// on. The queue's tables are graphile-worker's (schema `graphile_worker`); only its
// public functions and its `jobs` view are used, never its `_private_*` tables.
import type postgres from 'postgres';
import type { Db } from '../db/client.js';
import type { EnqueueOptions } from './queue.js';

export async function addJob(
  db: Db,
  task: string,
  payload: unknown,
  options: EnqueueOptions,
): Promise<string> {
  const delayMs = options.delayMs ?? null;
  const runAt = options.runAt ?? null;
  const [row]: [{ id: string }?] = await db`
    select (graphile_worker.add_job(
      identifier => ${task}::text,
      payload => ${db.json((payload ?? {}) as postgres.JSONValue)}::json,
      queue_name => ${options.queueName ?? null}::text,
      run_at => case
        when ${delayMs}::float8 is not null then now() + ${delayMs}::float8 * interval '1 millisecond'
        else ${runAt}::timestamptz
      end,
      max_attempts => ${options.maxAttempts ?? null}::int,
      job_key => ${options.jobKey ?? null}::text,
      priority => ${options.priority ?? null}::int,
      job_key_mode => ${options.jobKeyMode ?? 'replace'}::text
    )).id::text as id`;
  return row!.id;
}

/** Wakes idle workers (graphile-worker LISTENs on this channel); `count` is how many jobs to look for. */
export async function wakeWorkers(db: Db, count: number): Promise<void> {
  await db`select pg_notify('jobs:insert', ${JSON.stringify({ r: Math.random(), count })}::text)`;
}

/** Worker pools other than `own` that hold a lock on some job, with how many jobs each holds. */
export async function findLockingPools(db: Db, own: string[]): Promise<{ pool: string; jobs: number }[]> {
  return db<{ pool: string; jobs: number }[]>`
    select locked_by as pool, count(*)::int as jobs from graphile_worker.jobs
    where locked_by is not null and locked_by <> all(${own}::text[])
    group by locked_by`;
}

/** Releases every job and named queue `pool` holds, so other workers take them again. */
export async function unlockPool(db: Db, pool: string): Promise<void> {
  await db`select graphile_worker.force_unlock_workers(${[pool]}::text[])`;
}

/**
 * Brings every job of `tasks` waiting for a later run_at (a retry's backoff, a scheduled job) forward
 * to now. Returns how many moved and the database's now(), as text to keep its microseconds. For
 * tests: see Worker.runDue.
 */
export async function runWaitingJobsNow(db: Db, tasks: string[]): Promise<{ moved: number; at: string }> {
  const [row]: [{ moved: number; at: string }?] = await db`
    with moved as (
      select id from graphile_worker.reschedule_jobs(array(
        select id from graphile_worker.jobs
        where locked_at is null and attempts < max_attempts and run_at > now() and task_identifier = any(${tasks}::text[])
      ), run_at => now())
    )
    select (select count(*) from moved)::int as moved, now()::text as at`;
  return row!;
}

/**
 * Jobs of `tasks` that `pool` runs now, or that wait to run and were due at `since` or at once when
 * added (not those added since for later): zero when what was due at `since` is done.
 */
export async function countPendingJobs(
  db: Db,
  pool: string,
  tasks: string[],
  since: string,
): Promise<number> {
  // `since` travels as text: a timestamptz parameter would pass through a JavaScript Date and lose
  // its microseconds.
  const [row]: [{ n: number }?] = await db`
    select count(*)::int as n from graphile_worker.jobs
    where task_identifier = any(${tasks}::text[])
      and (
        locked_by = ${pool}
        or (locked_at is null and attempts < max_attempts and run_at <= greatest(created_at, ${since}::text::timestamptz))
      )`;
  return row!.n;
}

/** A job's state: undefined once it succeeded (the queue deletes finished jobs). */
export async function findJob(
  db: Db,
  id: string,
): Promise<{ attempts: number; last_error: string | null } | undefined> {
  const [row]: [{ attempts: number; last_error: string | null }?] = await db`
    select attempts, last_error from graphile_worker.jobs where id = ${id}::bigint`;
  return row;
}
