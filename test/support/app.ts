// The whole app on an ephemeral loopback port, on a fresh database cloned from the migrated template.
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { inject } from 'vitest';
import { createApp, type AppOptions } from '../../server/src/app.js';
import { loadConfig, type Config } from '../../server/src/config.js';
import { connect, type Sql } from '../../server/src/db/client.js';
import type { Clock } from '../../server/src/clock.js';
import type { Handlers } from '../../server/src/http/handler.js';
import { createLogger } from '../../server/src/http/logging.js';
import { createHttpServer } from '../../server/src/http/server.js';
import { startWorker, type Worker } from '../../server/src/jobs/worker.js';
import { TASKS } from '../../server/src/tasks.js';
import type { SubstrateDriver } from '../../server/src/substrate/driver.js';
import { createSubstrate } from '../../server/src/substrate/index.js';
import { secretBoxFor } from '../../server/src/secrets/key-file.js';
import { SecretBox } from '../../server/src/secrets/secret-box.js';
import { createGateway, type Gateway } from '../../server/src/gateway/server.js';
import { databaseUrl, TEMPLATE_DB } from './db-url.js';

/** A box with a key of its own, for tests that build parts without an app. */
export const testBox = SecretBox.of([randomBytes(32)]);

export class TestClock implements Clock {
  /** While following real time: how far this clock is from it (set and advance move it). */
  private offsetMs: number | null = null;
  constructor(private current = new Date('2026-11-21T12:00:00.000Z')) {}
  now(): Date {
    return this.offsetMs === null ? new Date(this.current) : new Date(Date.now() + this.offsetMs);
  }
  set(at: Date | string): void {
    if (this.offsetMs === null) this.current = new Date(at);
    else this.offsetMs = new Date(at).getTime() - Date.now();
  }
  advance(ms: number): void {
    if (this.offsetMs === null) this.current = new Date(this.current.getTime() + ms);
    else this.offsetMs += ms;
  }
  /**
   * From now on the clock runs with real time (set and advance still move it): for a file whose app
   * works beside a second process on real time, where a frozen clock falls behind as the file runs.
   */
  followRealTime(): void {
    this.offsetMs = 0;
  }
}

export interface TestApp {
  baseUrl: string;
  sql: Sql;
  config: Config;
  clock: TestClock;
  /** Every log line the app wrote, parsed. */
  logs: Record<string, unknown>[];
  databaseUrl: string;
  /** The app's own secret box (the test data directory's key file unless ENCRYPTION_KEY is given). */
  box: SecretBox;
  /**
   * The app's job worker (mail and every other task, on the app's clock), null with WORKER=off. The
   * crontab is off: tests run a periodic task with `worker.run(name)`, and due jobs (a mail retry
   * after the clock was advanced) with `worker.runDue()`.
   */
  worker: Worker | null;
  /** The worker's substrate (this app's own directory under DATA_DIR/substrate), null with WORKER=off. */
  substrate: SubstrateDriver | null;
  substrateDir: string;
  /** The edge gateway on its own loopback port (with `gateway: true`), on this app's substrate and clock. */
  gateway: Gateway | null;
  close(): Promise<void>;
}

/** A loopback port free a moment ago (the kernel's pick, released at once). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = inject('adminDatabaseUrl');
  const name = `t_${randomUUID().replace(/-/g, '')}`;
  const admin = connect(adminUrl, { max: 1 });
  await admin.unsafe(`create database ${name} template ${TEMPLATE_DB}`);
  return {
    url: databaseUrl(adminUrl, name),
    async drop() {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

export async function startTestApp(
  options: {
    env?: Record<string, string>;
    clock?: TestClock;
    databaseUrl?: string;
    handlers?: Handlers;
    contract?: AppOptions['contract'];
    /**
     * PUBLIC_BASE_URL is the app's own address (a port picked before the app is made), so links the
     * app mails open the app itself, as on the embedded default.
     */
    ownBaseUrl?: boolean;
    /** Start the edge gateway too (its own HTTP server; ticket URLs point at it). */
    gateway?: boolean;
    /** The API pool's size (main.ts: 20); 5 by default, enough for one test's requests. */
    dbPoolMax?: number;
  } = {},
): Promise<TestApp> {
  const db = options.databaseUrl ? null : await createTestDatabase();
  const url = options.databaseUrl ?? db!.url;
  const port = options.ownBaseUrl ? await freePort() : 0;
  const env = {
    ...(options.ownBaseUrl ? { PUBLIC_BASE_URL: `http://127.0.0.1:${port}` } : {}),
    NODE_ENV: 'test',
    DATA_DIR: join(process.cwd(), '.tmp', 'test-data'),
    DATABASE_URL: url,
    LOG_LEVEL: 'info',
    // The bounds of main.ts's pools, roomier: on a loaded CI machine a test's burst of requests may
    // wait longer than 5 s for one of its 5 connections (test/faults sets its own).
    DB_TIMEOUT_MS: '30000',
    ...options.env,
  };
  let config = loadConfig(env);
  // The pools main.ts makes, with the same bounded waits.
  const sql = connect(url, { max: options.dbPoolMax ?? 5, timeoutMs: config.dbTimeoutMs });
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logs.push(JSON.parse(line));
      cb();
    },
  });
  const clock = options.clock ?? new TestClock();
  const box = secretBoxFor(config);
  const substrateDir = join(config.dataDir, 'substrate', randomUUID());
  const substrate = config.worker ? createSubstrate(config.substrate, { dataDir: substrateDir, lxd: config.lxd }) : null;
  // The API's view of this app's substrate (its file routes); the worker's when it runs.
  const apiSubstrate = substrate ?? createSubstrate(config.substrate, { dataDir: substrateDir, lxd: config.lxd });
  let gateway: Gateway | null = null;
  let gatewaySql: Sql | null = null;
  if (options.gateway) {
    gatewaySql = connect(url, { max: 3, timeoutMs: config.dbTimeoutMs });
    gateway = createGateway({
      sql: gatewaySql,
      config,
      log: createLogger(config.logLevel, sink),
      clock,
      box,
      substrate: apiSubstrate,
    });
    gateway.server.listen(0, '127.0.0.1');
    await once(gateway.server, 'listening');
    const gatewayUrl = `http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}`;
    await gateway.start(gatewayUrl);
    const sftpPort = await gateway.sftp.listen(0, '127.0.0.1');
    config = loadConfig({ ...env, GATEWAY_PUBLIC_URL: gatewayUrl, SFTP_PORT: String(sftpPort) });
  }
  const app = createApp({
    sql,
    config,
    log: createLogger(config.logLevel, sink),
    clock,
    handlers: options.handlers,
    box,
    substrate: apiSubstrate,
    contract: options.contract,
  });
  const workerSql = config.worker ? connect(url, { max: 3, timeoutMs: config.dbTimeoutMs, statementTimeoutMs: 60_000 }) : null;
  const worker = workerSql
    ? await startWorker({
        sql: workerSql,
        databaseUrl: url,
        config,
        log: createLogger(config.logLevel, sink),
        clock,
        box,
        tasks: TASKS,
        periodic: false,
        concurrency: 2,
        pollIntervalMs: 500,
        // Units of this app only, stopped with it: test files share DATA_DIR and run side by side.
        substrate: substrate ?? undefined,
        stopUnitsOnStop: true,
      })
    : null;
  const server: Server = createHttpServer(app.express);
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${address.port}`,
    sql,
    config,
    clock,
    logs,
    databaseUrl: url,
    box,
    worker,
    substrate,
    substrateDir,
    gateway,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await gateway?.close();
      await gatewaySql?.end({ timeout: 1 });
      await app.docsReady;
      await worker?.stop();
      await rm(substrateDir, { recursive: true, force: true });
      await workerSql?.end({ timeout: 1 });
      await sql.end({ timeout: 1 });
      await db?.drop();
    },
  };
}
