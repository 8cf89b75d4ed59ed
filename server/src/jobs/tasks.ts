// Every task the workers run, with its handler; periodic ones with their schedule (the crontab).
// A task's name is what enqueue() takes and what the queue stores; renaming one strands its waiting
// jobs, so names stay.
import { recheckDomains } from '../features/domains/recheck.js';
import { requeueStrandedMail, sendMailTask, type SendMailPayload } from '../mail/sender.js';
import { convergeService, reconcileUnits, type ConvergePayload } from '../operations/converge.js';
import { OPERATIONS } from '../operations/definitions.js';
import { runOperation, type RunOperationPayload } from '../operations/run.js';
import { requeueStrandedOperations } from '../operations/stranded.js';
import type { TaskContext } from './context.js';
import {
  pruneFinishedMail,
  pruneIdempotencyKeys,
  pruneLoginChallenges,
  pruneOAuthFlows,
  pruneRateLimitBuckets,
  pruneSigningKeys,
} from './prune.js';

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

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** `run` gets the context only: a tick's payload carries nothing but its time. What it returns is ignored. */
function periodic(
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

/**
 * Periodic tasks. Each tick is scheduled once however many workers run (graphile-worker records the
 * tick in its known_crontabs row in the same statement that adds the job), and a periodic task never
 * overlaps itself: its jobs share a named queue, whose jobs run one at a time across all workers, and
 * a job key, so ticks that pile up while one runs wait as a single job (periodicJobOptions).
 */
export const PERIODIC_TASKS = {
  requeue_stranded_mail: periodic('*/5 * * * *', 5 * MINUTE, requeueStrandedMail),
  prune_rate_limit_buckets: periodic('*/10 * * * *', 10 * MINUTE, pruneRateLimitBuckets),
  prune_login_challenges: periodic('17 * * * *', HOUR, pruneLoginChallenges),
  prune_finished_mail: periodic('37 3 * * *', DAY, pruneFinishedMail),
  prune_signing_keys: periodic('47 3 * * *', DAY, pruneSigningKeys),
  prune_oauth_flows: periodic('27 * * * *', HOUR, pruneOAuthFlows),
  // A periodic task is this one entry. The handler decides what is due by ctx.clock (never the
  // database's now()), so a test freezes the clock and runs the job with app.worker.run(name).
  // Domain rechecks: each run a batch of verified and lost claims not checked for an hour, oldest first.
  recheck_domains: periodic('*/15 * * * *', 15 * MINUTE, async (ctx) => {
    await recheckDomains(ctx);
  }),
  prune_idempotency_keys: periodic('7 * * * *', HOUR, pruneIdempotencyKeys),
  requeue_stranded_operations: periodic('*/5 * * * *', 5 * MINUTE, requeueStrandedOperations),
  // Units that should run and do not (a node restart, a crashed unit) are started again.
  reconcile_units: periodic('* * * * *', MINUTE, reconcileUnits),
} satisfies Record<string, PeriodicTask>;

/** Tasks run when code enqueues them. */
const ON_DEMAND_TASKS = {
  send_mail: { run: sendMailTask },
  run_operation: { run: (payload, ctx) => runOperation(OPERATIONS, payload as RunOperationPayload, ctx) },
  converge_service: {
    run: async (payload, ctx) => {
      await convergeService(payload as ConvergePayload, ctx);
    },
  },
} satisfies Record<string, TaskDefinition>;

export const TASKS: Readonly<Record<string, TaskDefinition | PeriodicTask>> = {
  ...ON_DEMAND_TASKS,
  ...PERIODIC_TASKS,
};

/** What the crontab puts in a periodic job's payload. */
export interface PeriodicPayload {
  _cron?: { ts: string; backfilled: boolean };
}

/** The payload each task takes, for enqueue(). */
export interface TaskPayloads extends Record<keyof typeof PERIODIC_TASKS, PeriodicPayload> {
  send_mail: SendMailPayload;
  run_operation: RunOperationPayload;
  converge_service: ConvergePayload;
}

/** Queue and key shared by every job of periodic task `name`: one at a time, ticks merged. */
export function periodicJobOptions(name: string): { queueName: string; jobKey: string; maxAttempts: number } {
  return { queueName: `periodic:${name}`, jobKey: `periodic:${name}`, maxAttempts: 5 };
}

export function isPeriodic(task: TaskDefinition | PeriodicTask): task is PeriodicTask {
  return 'cron' in task;
}
