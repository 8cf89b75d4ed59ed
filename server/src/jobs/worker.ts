// The worker: graphile-worker's runner over the tasks it is given (the app's: server/src/tasks.ts). It
// runs inside the API process (unless WORKER=off) or alone (`npm run worker`, scripts/worker.ts); any
// number of them may share a database. New jobs reach a worker by LISTEN/NOTIFY within milliseconds of their commit; jobs due
// later by polling.
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import {
  Logger as GraphileLogger,
  parseCronItems,
  run,
  type CronItem,
  type Runner,
  type TaskList,
  type WorkerEvents,
} from 'graphile-worker';
import type { Config } from '../config.js';
import type { Sql } from '../db/client.js';
import { systemClock, type Clock } from '../clock.js';
import { openMailSender } from '../mail/transport.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { SubstrateDriver } from '../substrate/driver.js';
import { createSubstrate } from '../substrate/index.js';
import type { TaskContext } from './context.js';
import { startLiveness, type Liveness } from './liveness.js';
import { queuePool } from './pg-pool.js';
import { JOB_SCHEMA } from './schema.js';
import { addJob, countPendingJobs, findJob, runWaitingJobsNow, wakeWorkers } from './store.js';
import { isPeriodic, periodicJobOptions, type Tasks } from './task.js';

export interface WorkerOptions {
  /** Connections for the tasks. */
  sql: Sql;
  /**
   * The same database, for graphile-worker's own pool (node-postgres) with its LISTEN connection, and
   * for the worker's liveness connection (liveness.ts).
   */
  databaseUrl: string;
  config: Config;
  log: Logger;
  box: SecretBox;
  /** The hosting substrate operations act on (default: SUBSTRATE's driver over DATA_DIR); closed at stop. */
  substrate?: SubstrateDriver;
  /** Stop every unit when the worker stops (tests: nothing outlives them). Default false: units run on. */
  stopUnitsOnStop?: boolean;
  /** What tasks decide by (ctx.clock). Default: the system clock. */
  clock?: Clock;
  /** What it runs, by name: the app's TASKS (server/src/tasks.ts), or a test's own. */
  tasks: Tasks;
  /** Schedule the periodic tasks (the crontab). Default true; the test app's worker leaves it off. */
  periodic?: boolean;
  /** Jobs run at once by this worker. Default 4. */
  concurrency?: number;
  /** How often an idle worker looks for jobs whose run_at has come. Default 2000 ms. */
  pollIntervalMs?: number;
  /** How often to look for jobs of workers that died. Default 60 s (and once at start). */
  recoverEveryMs?: number;
}

export interface Worker {
  /** The pool id this worker's jobs are locked by (graphile-worker's locked_by). */
  readonly poolId: string;
  /**
   * Waits for the jobs in hand to finish (up to graphile-worker's abort timeout), then lets go of the
   * worker's connections and locks. Jobs not started wait in the queue for the next worker.
   */
  stop(): Promise<void>;
  /**
   * For tests: brings every job waiting for a later time forward to now, then resolves once those, and
   * the jobs they enqueued to run at once, ran (or failed); jobs they scheduled for later wait. Resolves
   * with how many jobs ran meanwhile. `task` limits it to one task. Other workers on the database may
   * take some of the jobs; a job they hold is not waited for.
   */
  runDue(options?: { task?: string; timeoutMs?: number }): Promise<number>;
  /** For tests: enqueues `task` now and resolves once it ran; rejects with its error if it threw. */
  run(task: string, payload?: object): Promise<void>;
  /** Unlocks the jobs of workers that died now, instead of at the next periodic look. */
  recover(): Promise<number>;
}

const DEFAULT_CONCURRENCY = 4;

export async function startWorker(options: WorkerOptions): Promise<Worker> {
  const { sql, config, log, box } = options;
  const clock = options.clock ?? systemClock;
  const tasks = options.tasks;
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const taskNames = Object.keys(tasks);

  const substrate = options.substrate ?? createSubstrate(config.substrate, { dataDir: config.dataDir, lxd: config.lxd });
  const mail = await openMailSender({ config, log });
  let liveness: Liveness;
  try {
    liveness = await startLiveness(options.databaseUrl, log);
  } catch (err) {
    mail.close();
    throw err;
  }
  const events: WorkerEvents = new EventEmitter();
  let poolId = '';
  events.on('pool:create', ({ workerPool }) => {
    poolId = workerPool.id;
  });
  // The crontab registers its tasks (and schedules what a tick missed while every worker was down)
  // just after the runner starts; startWorker resolves after that.
  const cronStarted = new Promise<void>((resolve) => events.once('cron:started', () => resolve()));
  let jobsRun = 0;
  events.on('job:complete', () => {
    jobsRun += 1;
  });

  const stopSignal = new AbortController();
  const taskList: TaskList = {};
  for (const [name, task] of Object.entries(tasks)) {
    taskList[name] = (payload, helpers) =>
      task.run(payload, {
        sql,
        config,
        log,
        clock,
        box,
        mail,
        substrate,
        stopping: stopSignal.signal,
        job: {
          id: String(helpers.job.id),
          attempts: helpers.job.attempts,
          maxAttempts: helpers.job.max_attempts,
          key: helpers.job.key,
        },
      } satisfies TaskContext);
  }

  // The workers, the LISTEN connection, and the crontab's and lock-expiry scans.
  const pool = queuePool(options.databaseUrl, { max: concurrency + 2, timeoutMs: config.dbTimeoutMs }, log);
  let runner: Runner;
  try {
    runner = await run({
      pgPool: pool,
      schema: JOB_SCHEMA,
      concurrency,
      pollInterval: options.pollIntervalMs ?? 2000,
      // The process owns its signals (main.ts drains requests first, then stops the worker).
      noHandleSignals: true,
      logger: graphileLogger(log),
      events,
      taskList,
      parsedCronItems: options.periodic === false ? [] : crontab(tasks),
      preset: {
        plugins: [
          {
            name: 'WorkerLiveness',
            version: '1.0.0',
            description: 'Holds the pool’s liveness lock before it takes its first job (liveness.ts).',
            // No worker of the pool takes a job before the pool holds its liveness lock.
            worker: { hooks: { startWorker: (_ctx, event) => liveness.hold(event.worker.workerPool.id) } },
          },
        ],
      },
    });
  } catch (err) {
    await liveness.stop();
    await pool.end().catch(() => {});
    mail.close();
    throw err;
  }
  // The runner ends on its own only when something is wrong (a fatal database error, or a newer
  // graphile-worker made a breaking change to the queue's schema): say so, since no job runs here after.
  let stopping: Promise<void> | null = null;
  runner.promise.then(
    () => {
      if (!stopping) log.error('job worker stopped by itself; restart this process to run jobs again');
    },
    (err: unknown) => {
      log.error(
        { error: err instanceof Error ? err.message : String(err) },
        'job worker stopped after an error',
      );
    },
  );

  try {
    await Promise.all([listening(sql, events), withDeadline(cronStarted, 'register its periodic tasks')]);
  } catch (err) {
    await runner.stop().catch(() => {});
    await liveness.stop();
    await pool.end().catch(() => {});
    mail.close();
    throw err;
  }
  const recover = async () => {
    try {
      return await liveness.recover();
    } catch (err) {
      log.error(
        { error: err instanceof Error ? err.message : String(err) },
        'could not look for jobs of dead workers',
      );
      return 0;
    }
  };
  await recover();
  const timer = setInterval(() => void recover(), options.recoverEveryMs ?? 60_000);
  timer.unref();
  log.info({ pool: poolId, concurrency, periodic: options.periodic !== false }, 'job worker started');

  const worker: Worker = {
    poolId,
    stop() {
      stopping ??= (async () => {
        clearInterval(timer);
        stopSignal.abort();
        await runner.stop().catch((err: unknown) => {
          log.error(
            { error: err instanceof Error ? err.message : String(err) },
            'job worker did not stop cleanly',
          );
        });
        await liveness.stop();
        // Ours, not the runner's: graphile-worker leaves a pool it was given open.
        await pool.end().catch(() => {});
        mail.close();
        await substrate.close({ stopUnits: options.stopUnitsOnStop ?? false });
      })();
      return stopping;
    },

    async runDue({ task, timeoutMs = 10_000 } = {}) {
      if (stopping) throw new Error('the job worker is stopped');
      const names = task ? [task] : taskNames;
      const before = jobsRun;
      const { moved, at } = await runWaitingJobsNow(sql, names);
      await wakeWorkers(sql, Math.max(moved, concurrency));
      const deadline = Date.now() + timeoutMs;
      for (let round = 1; (await countPendingJobs(sql, poolId, names, at)) > 0; round++) {
        if (Date.now() > deadline) throw new Error(`jobs still pending after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 5));
        // A job of a named queue becomes takeable when the one before it is completed, which wakes
        // nobody; idle workers would wait for their next poll.
        if (round % 5 === 0) await wakeWorkers(sql, concurrency);
      }
      return jobsRun - before;
    },

    async run(task, payload = {}) {
      if (!(task in tasks)) throw new Error(`no task named ${task}`);
      const id = await addJob(sql, task, payload, isPeriodic(tasks[task]!) ? periodicJobOptions(task) : {});
      await worker.runDue({ task });
      const job = await findJob(sql, id);
      if (job) throw new Error(`${task} failed: ${job.last_error ?? 'still waiting'}`);
    },

    recover,
  };
  return worker;
}

/** graphile-worker crontab items of the periodic tasks. */
function crontab(tasks: Tasks) {
  const items: CronItem[] = [];
  for (const [name, task] of Object.entries(tasks)) {
    if (!isPeriodic(task)) continue;
    items.push({
      task: name,
      identifier: name,
      match: task.cron,
      options: { ...periodicJobOptions(name), backfillPeriod: task.backfillMs, jobKeyMode: 'replace' },
    });
  }
  return parseCronItems(items);
}

const START_TIMEOUT_MS = 30_000;

function withDeadline(promise: Promise<void>, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the job worker did not ${what} within ${START_TIMEOUT_MS / 1000} s`)),
      START_TIMEOUT_MS,
    );
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/**
 * Resolves once the runner's LISTEN connection hears notifications, so a job committed afterwards is
 * taken at once rather than at the next poll. Sends a marked notification (count 0: no worker
 * looks for a job because of it) until it comes back.
 */
async function listening(sql: Sql, events: WorkerEvents): Promise<void> {
  const marker = randomUUID();
  let heard = false;
  const onNotification = ({ message }: { message: { payload?: string } }) => {
    if (message.payload?.includes(marker)) heard = true;
  };
  events.on('pool:listen:notification', onNotification);
  try {
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!heard) {
      if (Date.now() > deadline) {
        throw new Error(
          `the job worker did not start listening for jobs within ${START_TIMEOUT_MS / 1000} s`,
        );
      }
      await sql`select pg_notify('jobs:insert', ${JSON.stringify({ r: marker, count: 0 })})`;
      await new Promise((r) => setTimeout(r, 3));
    }
  } finally {
    events.off('pool:listen:notification', onNotification);
  }
}

/**
 * graphile-worker's log lines into ours. Only the message and its scope: the metadata it attaches can
 * hold a job's payload or a database error's parameters. Its info lines (a line per job) are debug here.
 */
function graphileLogger(log: Logger): GraphileLogger {
  return new GraphileLogger((scope) => (level, message) => {
    const fields = {
      ...(scope.workerId ? { worker: scope.workerId } : {}),
      ...(scope.taskIdentifier ? { task: scope.taskIdentifier } : {}),
      ...(scope.jobId ? { job_id: scope.jobId } : {}),
    };
    if (level === 'error') log.error(fields, message);
    else if (level === 'warning') log.warn(fields, message);
    else if (level === 'info') log.debug(fields, message);
    else log.trace(fields, message);
  });
}
