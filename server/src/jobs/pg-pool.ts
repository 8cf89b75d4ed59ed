// The job queue's own connections. graphile-worker speaks node-postgres, not postgres.js, so its pool is
// made here rather than by db/client.ts, with the same bounds (DECISIONS §2 "DB_TIMEOUT_MS"): a connect
// that waits longer fails, a queue query that runs longer is cancelled, and a connection PostgreSQL
// closes (a terminated backend, a restart) is logged and replaced rather than ending the process.
import pg from 'pg';
import type { Logger } from 'pino';

export interface QueuePoolOptions {
  max: number;
  /** DB_TIMEOUT_MS: connect, and each of the queue's own statements. */
  timeoutMs: number;
}

export function queuePool(databaseUrl: string, options: QueuePoolOptions, log: Logger): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.max,
    application_name: 'svc-job-queue',
    connectionTimeoutMillis: options.timeoutMs,
    // The queue's statements (take a job, complete it) are short; a task's own work runs on the app's
    // pool. The idle LISTEN connection is not a statement, so it is not cut.
    statement_timeout: options.timeoutMs,
    query_timeout: options.timeoutMs + 500,
  });
  // An idle client whose connection broke: without a listener node-postgres would throw it at the process.
  const lost = (err: Error) => log.warn({ error: err.message }, 'job queue connection lost; it is replaced');
  pool.on('error', lost);
  // And a client in use (graphile-worker's LISTEN connection): graphile-worker warns on every start
  // without this handler, and installs a silent one of its own.
  pool.on('connect', (client) => client.on('error', lost));
  return pool;
}
