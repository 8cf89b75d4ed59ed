// Child process of `npm run bench`: serves one variant on an ephemeral loopback port, so the load
// generator (the parent) and the server under test each get their own core.
//
//   node --import tsx scripts/bench/server.ts <full|bare|bare-served|inflated|me-bare|me-fastify>
//
// me-bare and me-fastify serve GET /api/v2/me only: a bare Express route doing meGet's work (served by
// createHttpServer, as the full stack is), and the same route on Fastify 5 (scripts/bench/fastify-me.ts).
//
// BENCH_DATABASE_URL   the database (the parent starts it and inserts the incidents, the user and its
//                      session; the signing keys live there too, so every process verifies the same tokens)
// BENCH_NODE_ENV       production (no response validation) or test (response validation on)
// BENCH_DATA_DIR       DATA_DIR (the /docs cache lives there)
// BENCH_ENCRYPTION_KEY ENCRYPTION_KEY, made by the parent for the run (production requires one), the
//                      same for every process
// BENCH_STOCK_EOV      optional: path of an unpatched express-openapi-validator's dist/index.js that
//                      `import 'express-openapi-validator'` resolves to instead of node_modules' copy
//
// Sends { type: 'ready', port, validator } to the parent over IPC once it listens, answers { type: 'cpu' }
// with its CPU time; exits on SIGTERM or when the parent goes away.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { Express, NextFunction, Request, Response } from 'express';
import type { ValidatedRequest } from '../../server/src/http/validator.js';
import { useStockValidator } from './stock-validator.js';

const KINDS = ['full', 'bare', 'bare-served', 'inflated', 'me-bare', 'me-fastify'] as const;
type Kind = (typeof KINDS)[number];
const kind = process.argv[2] as Kind;
if (!KINDS.includes(kind)) throw new Error(`unknown server kind "${kind}"`);
const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

const stock = process.env.BENCH_STOCK_EOV;
// Before anything imports the validator: every module below is imported dynamically.
if (stock) useStockValidator(stock);

const { default: express } = await import('express');
const { destination } = await import('pino');
const { createApp } = await import('../../server/src/app.js');
const { CAPABILITY_NAMES, loadConfig } = await import('../../server/src/config.js');
const { connect } = await import('../../server/src/db/client.js');
const { listOngoingIncidents } = await import('../../server/src/features/public/store.js');
const { toIncident } = await import('../../server/src/features/public/mappers.js');
const { systemClock } = await import('../../server/src/clock.js');
const { createLogger, requestLog } = await import('../../server/src/http/logging.js');
const { createHttpServer } = await import('../../server/src/http/server.js');
const { notFoundFallback, problemHandler } = await import('../../server/src/http/problems.js');
const { jsonBody } = await import('../../server/src/http/json-body.js');
const { series } = await import('../../server/src/http/series.js');
const { openApiValidator } = await import('../../server/src/http/validator.js');
const { API_BASE_PATH, bundledSpec } = await import('../../server/src/spec.js');
const { inflateSpec, SYNTHETIC_OPERATIONS, syntheticBody, syntheticPath } = await import('./inflated-spec.js');
const { KeyRing } = await import('../../server/src/auth/crypto/signing-keys.js');
const { secretBoxFor } = await import('../../server/src/secrets/key-file.js');
const { toMe } = await import('../../server/src/features/me/mappers.js');
const SESSION = { kind: 'session' } as const;
const { BEARER, findCaller, UNAUTHENTICATED } = await import('./me-route.js');

const config = loadConfig({
  NODE_ENV: env('BENCH_NODE_ENV'),
  DATABASE_URL: env('BENCH_DATABASE_URL'),
  DATA_DIR: env('BENCH_DATA_DIR'),
  ENCRYPTION_KEY: env('BENCH_ENCRYPTION_KEY'),
  LOG_LEVEL: 'info',
});
// The request log is written as in production (one line per request, asynchronously: see
// createLogger), to /dev/null instead of stdout so that the parent does not pay for reading it.
const log = createLogger(config.logLevel, destination({ dest: '/dev/null', sync: false }));
// The pools main.ts makes (db/client.ts), with the same bounded waits.
const sql = connect(config.databaseUrl!, { max: 10, timeoutMs: config.dbTimeoutMs });

function bareApp(): Express {
  // The same work as the two operations (same query through postgres.js, same JSON), and nothing else:
  // no request id, no request log, no body parser, no validation.
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.get('/api/v2/public/capabilities', (_req, res) => {
    const caps = config.capabilities;
    res.json(Object.fromEntries(CAPABILITY_NAMES.map((c) => [c, caps[c]])));
  });
  app.get('/api/v2/public/incidents', async (_req, res) => {
    const rows = await listOngoingIncidents(sql, systemClock.now());
    res.json(rows.map(toIncident));
  });
  return app;
}

function meBareApp(): Express {
  // meGet's work (scripts/bench/me-route.ts: the token verified with jose through the KeyRing, the
  // session checked, the user selected, the row mapped by toMe) and nothing else.
  const keys = new KeyRing(sql, systemClock, secretBoxFor(config));
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.get(`${API_BASE_PATH}/me`, async (req, res) => {
    const token = BEARER.exec(req.headers.authorization ?? '')?.[1];
    const me = token === undefined ? null : await findCaller(sql, keys, token, systemClock.now());
    if (!me) {
      res.status(401).set('WWW-Authenticate', 'Bearer').type('application/problem+json').send(JSON.stringify(UNAUTHENTICATED));
      return;
    }
    res.json(toMe(me, SESSION));
  });
  return app;
}

function inflatedApp(): Express {
  // createApp's middleware stack (server/src/app.ts) around the inflated spec. Only synthetic
  // operations are requested here, so the spec's own operations are not bound (a request to one would
  // pass validation and end in the 404 fallback); /docs and the probes are left out too.
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxyHops);
  app.set('etag', false);
  app.use(requestLog(log));
  // Synthetic operations are dispatched as the spec's own are (server/src/http/bind.ts): on the route
  // the validator matched, looked up in a map, so that only the validator's route scan depends on the
  // operation's position.
  const areas = new Map<string, string>();
  for (let n = 0; n < SYNTHETIC_OPERATIONS; n += 1) {
    const path = syntheticPath(n);
    areas.set(`${API_BASE_PATH}${path}`, path.split('/')[2]!);
  }
  const synthetic = (req: Request, res: Response, next: NextFunction) => {
    const openapi = (req as ValidatedRequest).openapi;
    const area = openapi && req.method === 'GET' ? areas.get(openapi.openApiRoute) : undefined;
    if (area === undefined) {
      next();
      return;
    }
    res.locals.routeTemplate = openapi!.openApiRoute.slice(API_BASE_PATH.length);
    res.json(syntheticBody(area, openapi!.pathParams.id as string));
  };
  app.use(series([jsonBody(API_BASE_PATH), ...openApiValidator(inflateSpec(bundledSpec), config.validateResponses), synthetic]));
  app.use(notFoundFallback);
  app.use(problemHandler(log));
  return app;
}

let handler: Express | null = null;
if (kind === 'full') {
  const app = createApp({ sql, config, log, clock: systemClock });
  // /docs is built in the background on first start (redocly, seconds of CPU): not while measuring.
  await app.docsReady;
  handler = app.express;
} else if (kind === 'bare' || kind === 'bare-served') {
  handler = bareApp();
} else if (kind === 'me-bare') {
  handler = meBareApp();
} else if (kind === 'inflated') {
  handler = inflatedApp();
}

// The full and inflated apps are served as main.ts serves them, by createHttpServer (requests made with
// Express's prototypes); the bare route as Express apps usually are, by node:http's createServer, and
// (bare-served, me-bare) by createHttpServer too, to show what the stack costs on the same footing.
// Fastify serves itself (its own node:http server).
let server: Server;
if (kind === 'me-fastify') {
  const { fastifyMeApp } = await import('./fastify-me.js');
  const app = fastifyMeApp({ sql, keys: new KeyRing(sql, systemClock, secretBoxFor(config)), clock: systemClock });
  await app.listen({ port: 0, host: '127.0.0.1' });
  server = app.server;
} else {
  if (handler === null) throw new Error(`no app for server kind "${kind}"`);
  server = kind === 'bare' ? createServer(handler) : createHttpServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
}

// Which copy of the validator this process actually loaded (the parent checks it).
const require = createRequire(import.meta.url);
const validator =
  Object.keys(require.cache).find((p) => /express-openapi-validator[\\/]dist[\\/]index\.js$/.test(p)) ?? null;
process.send!({ type: 'ready', port: (server.address() as AddressInfo).port, validator });
// The parent reads this process's CPU time around each measured slice: CPU per request is a steadier
// figure than requests per second when other work shares the machine.
process.on('message', (m: { type?: string; id?: number }) => {
  if (m.type === 'cpu') process.send!({ type: 'cpu', id: m.id, usage: process.cpuUsage() });
});

const stop = async () => {
  server.closeAllConnections();
  server.close();
  await sql.end({ timeout: 1 });
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('disconnect', () => void stop());
