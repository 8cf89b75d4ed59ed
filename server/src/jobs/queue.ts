// Adding a job to the one queue of background work. graphile-worker, not pg-boss, because a job is a
// row added by a SQL function (`graphile_worker.add_job`): called on the caller's own connection or
// transaction (our postgres.js `tx`), the job commits or rolls back with the state change that
// wants it, so a job never runs for a change that did not happen and never goes missing for one
// that did. pg-boss enqueues through its own client and pool, outside the caller's transaction.
// The insert NOTIFYs the workers, which take the job within milliseconds of the commit.
import type { Db } from '../db/client.js';
import { addJob } from './store.js';
import type { TaskPayloads } from './payloads.js';

export interface EnqueueOptions {
  /** When the job may run, on the database's clock. Default: at once. */
  runAt?: Date;
  /** Instead of runAt: this many milliseconds after the database's now() (the transaction's start). */
  delayMs?: number;
  /**
   * At most one waiting job per key: adding a job with the key of one that waits replaces it; with the
   * key of one that runs, the running one is not retried and the new one waits (see jobs/task.ts).
   */
  jobKey?: string;
  /** `preserve_run_at` keeps the waiting job's run_at when replacing it. Default `replace`. */
  jobKeyMode?: 'replace' | 'preserve_run_at';
  /** Runs of a job that throws, the first included (the queue's default: 25). */
  maxAttempts?: number;
  /** Jobs of one named queue run one at a time across every worker. Few names, never one per job. */
  queueName?: string;
  /** Smaller runs first. Default 0. */
  priority?: number;
}

/**
 * Adds a job of `task` (a name in jobs/payloads.ts) in `db`'s transaction; resolves with its id. Call it
 * with the transaction of the change the job acts on.
 */
export async function enqueue<T extends keyof TaskPayloads>(
  db: Db,
  task: T,
  payload: TaskPayloads[T],
  options: EnqueueOptions = {},
): Promise<string> {
  return addJob(db, task, payload, options);
}
