// Workers of the job queue on a test database, with tasks of the test's own.
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig } from '../../server/src/config.js';
import { connect, type Sql } from '../../server/src/db/client.js';
import { createLogger } from '../../server/src/http/logging.js';
import { startWorker, type Worker, type WorkerOptions } from '../../server/src/jobs/worker.js';
import { TASKS } from '../../server/src/tasks.js';
import { testBox } from '../support/app.js';

export interface TestWorker extends Worker {
  /** Every log line the worker wrote, parsed. */
  lines: Record<string, unknown>[];
}

/**
 * A worker as another process would run one: its own connection pool (closed on stop) and its own
 * queue pool and LISTEN connection. Mail goes to files under the test data directory.
 */
export async function testWorker(
  databaseUrl: string,
  options: Partial<Omit<WorkerOptions, 'sql' | 'databaseUrl'>> = {},
): Promise<TestWorker> {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      cb();
    },
  });
  const sql: Sql = connect(databaseUrl, { max: 4 });
  const worker = await startWorker({
    sql,
    databaseUrl,
    config: loadConfig({
      NODE_ENV: 'test',
      DATABASE_URL: databaseUrl,
      DATA_DIR: join(process.cwd(), '.tmp', 'test-data'),
    }),
    log: createLogger('debug', sink),
    box: testBox,
    tasks: TASKS,
    periodic: false,
    concurrency: 2,
    pollIntervalMs: 60_000,
    ...options,
  });
  const stop = worker.stop;
  return Object.assign(worker, {
    lines,
    async stop() {
      await stop();
      await sql.end({ timeout: 1 });
    },
  });
}

/** A promise with its resolve function outside, for a task the test holds in flight. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

export async function eventually<T>(
  probe: () => Promise<T | undefined | null | false>,
  // Generous: a CI machine at load 10 has taken over 5 s to start a worker and run its first job.
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
