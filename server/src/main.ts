// `npm start`: read config, start the embedded PostgreSQL when no DATABASE_URL is given (supervised:
// db/supervisor.ts), migrate, start the job worker (unless WORKER=off), listen. SIGTERM/SIGINT drain
// in-flight requests, let the jobs in hand finish, then stop the database this process started
// (process/lifecycle.ts); so does a fatal failure, which then exits 1.
import { once } from 'node:events';
import { join } from 'node:path';
import { createApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { connect } from './db/client.js';
import type { Server } from 'node:http';
import { superviseEmbeddedPostgres, type SupervisedDatabase } from './db/supervisor.js';
import { createLifecycle, type Lifecycle } from './process/lifecycle.js';
import { migrate } from './db/migrate.js';
import { stdoutLogDestination } from './http/log-format.js';
import { createLogger } from './http/logging.js';
import { createHttpServer } from './http/server.js';
import { startChildProgram } from './process/child-program.js';
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

let life: Lifecycle | null = null;

async function main(): Promise<void> {
  const config = readConfig();
  const log = createLogger(config.logLevel, stdoutLogDestination(config));
  // Signals and fatal errors are handled from here on: whatever starts below is stopped on the way out.
  const lifecycle = (life = createLifecycle(log));
  let embedded: SupervisedDatabase | null = null;
  if (config.databaseUrl === null) {
    log.info({ dir: join(config.dataDir, 'postgres') }, 'starting embedded PostgreSQL');
    embedded = await superviseEmbeddedPostgres({
      dir: join(config.dataDir, 'postgres'),
      log,
      onGiveUp: (err) => lifecycle.fail(err),
    });
    lifecycle.onStop('embedded PostgreSQL', embedded.stop, 20_000);
  }
  const databaseUrl = config.databaseUrl ?? embedded!.url;
  // Migrations may run long: their own connection, without the request timeouts.
  const migrator = connect(databaseUrl, { max: 1, name: 'svc-control-plane migrate' });
  try {
    const applied = await migrate(migrator);
    if (applied.length > 0) log.info({ migrations: applied }, 'migrations applied');
  } finally {
    await migrator.end({ timeout: 5 });
  }
  const sql = connect(databaseUrl, { max: 20, timeoutMs: config.dbTimeoutMs });
  lifecycle.onStop('database pool', () => sql.end({ timeout: 5 }));

  const box = secretBoxFor(config);
  const sealed = await sealLegacySecrets(sql, box);
  if (sealed > 0) log.info({ sealed }, 'secrets stored in the clear were sealed with the encryption key');

  const app = createApp({ sql, config, log, box });
  // The worker's own connections: background jobs never wait for, or hold up, a request's. Its
  // statements may run longer than a request's; its waits for the database are as bounded.
  const workerSql = config.worker
    ? connect(databaseUrl, { max: 6, timeoutMs: config.dbTimeoutMs, statementTimeoutMs: WORKER_STATEMENT_TIMEOUT_MS, name: 'svc-control-plane worker' })
    : null;
  if (workerSql) lifecycle.onStop('worker database pool', () => workerSql.end({ timeout: 5 }));
  const worker = workerSql ? await startWorker({ sql: workerSql, databaseUrl, config, log, box, tasks: TASKS }) : null;
  if (worker) lifecycle.onStop('job worker', () => worker.stop(), 30_000);
  // The edge (EDGE=on) and the gateway (GATEWAY=on), each its own process (process/child-program.ts).
  const child = (name: string, main: string, restartMs: number) =>
    startChildProgram({ name, main: new URL(main, import.meta.url).href, databaseUrl, restartMs, log });
  const edge = config.edge ? child('edge', './edge/main.ts', 1_000) : null;
  if (edge) lifecycle.onStop('edge', () => edge.stop(), 10_000);
  const gateway = config.gateway ? child('gateway', './gateway/main.ts', 2_000) : null;
  if (gateway) lifecycle.onStop('gateway', () => gateway.stop(), 10_000);
  const dns = config.platformDns ? child('dns', './dns-server/main.ts', 1_000) : null;
  if (dns) lifecycle.onStop('platform DNS', () => dns.stop(), 10_000);
  const server = createHttpServer(app.express);
  server.listen(config.port, config.host);
  await once(server, 'listening');
  lifecycle.onStop('HTTP server', () => drain(server), DRAIN_MS + 1_000);
  const addr = server.address();
  const base = `http://${config.host}:${typeof addr === 'object' && addr ? addr.port : config.port}`;
  process.stdout.write(
    `control plane listening\n  API   ${base}/api/v2\n  docs  ${base}/docs\n  spec  ${base}/api/v2/openapi.json\n` +
      `  database ${embedded ? `embedded, data in ${join(config.dataDir, 'postgres')}` : 'DATABASE_URL'}\n` +
      `  jobs  ${worker ? 'run in this process' : 'WORKER=off: run by npm run worker'}\n` +
      `  edge  ${edge ? `a child process forwarding ports ${config.portPool.from}-${config.portPool.to} on ${config.host}` : 'EDGE=off: run npm run edge'}\n` +
      `  dns   ${dns ? `a child process answering ${config.platformDomain} and the parent domains on ${config.host}:${config.dnsPort} (udp, tcp)` : 'PLATFORM_DNS=off: run npm run dns'}\n` +
      `  gateway ${gateway ? `${config.gatewayPublicUrl}, a child process (consoles, shells)` : 'GATEWAY=off: run npm run gateway'}\n`,
  );
}

/** In-flight requests get this long to finish once a stop begins; keep-alive sockets close when idle. */
const DRAIN_MS = 10_000;
const WORKER_STATEMENT_TIMEOUT_MS = 60_000;

async function drain(server: Server): Promise<void> {
  const closed = once(server, 'close');
  server.close();
  server.closeIdleConnections();
  const deadline = setTimeout(() => server.closeAllConnections(), DRAIN_MS);
  await closed;
  clearTimeout(deadline);
}

main().catch((err: unknown) => {
  process.stderr.write(`failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  // What did start (the embedded PostgreSQL above all) is stopped before the exit.
  if (life) void life.stop('failed to start', 1);
  else process.exit(1);
});
