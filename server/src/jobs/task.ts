// What a task is to the queue: a handler, and for a periodic one its schedule. Areas build theirs with
// these (mail/tasks.ts, operations/tasks.ts, ...); the composition root (server/src/tasks.ts) gathers
// them and hands them to the worker.
import type { TaskContext } from './context.js';
import type { TaskName } from './payloads.js';

export interface TaskDefinition {
  /** Throwing fails the run: the queue runs it again later (exponential backoff) up to maxAttempts. */
  run(payload: unknown, ctx: TaskContext): Promise<void>;
}

export interface PeriodicTask extends TaskDefinition {
  /** When it runs: a cron pattern in UTC, minute resolution (`*\/10 * * * *`: every ten minutes). */
  cron: string;
  /**
   * A worker that starts runs one catch-up if a tick this long ago was missed because every worker
   * was down (graphile-worker's backfill; ticks before the task was first seen are never made up).
   */
  backfillMs: number;
}

/** Tasks by name, as an area exports them (only names of jobs/payloads.ts). */
export type AreaTasks = { readonly [K in TaskName]?: TaskDefinition | PeriodicTask };

/** Every task a worker runs, by name. */
export type Tasks = Readonly<Record<string, TaskDefinition | PeriodicTask>>;

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/**
 * A periodic task. Each tick is scheduled once however many workers run (graphile-worker records the
 * tick in its known_crontabs row in the same statement that adds the job), and a periodic task never
 * overlaps itself: its jobs share a named queue, whose jobs run one at a time across all workers, and
 * a job key, so ticks that pile up while one runs wait as a single job (periodicJobOptions).
 *
 * `run` gets the context only: a tick's payload carries nothing but its time. What it returns is
 * ignored. The handler decides what is due by ctx.clock (never the database's now()), so a test
 * freezes the clock and runs the job with app.worker.run(name).
 */
export function periodic(
  cron: string,
  backfillMs: number,
  run: (ctx: TaskContext) => Promise<unknown>,
): PeriodicTask {
  return {
    cron,
    backfillMs,
    run: async (_payload, ctx) => {
      await run(ctx);
    },
  };
}

/** Queue and key shared by every job of periodic task `name`: one at a time, ticks merged. */
export function periodicJobOptions(name: string): { queueName: string; jobKey: string; maxAttempts: number } {
  return { queueName: `periodic:${name}`, jobKey: `periodic:${name}`, maxAttempts: 5 };
}

export function isPeriodic(task: TaskDefinition | PeriodicTask): task is PeriodicTask {
  return 'cron' in task;
}
