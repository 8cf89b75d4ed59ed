// createApp builds the whole HTTP application without listening, so tests run exactly what main runs.
import { join } from 'node:path';
import express, { type Express } from 'express';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Sql } from './db/client.js';
import { bindOperations, type BindableOperation } from './http/bind.js';
import { defaultHeaders } from './http/default-headers.js';
import { buildDocs, DOCS_CSP } from './http/docs.js';
import { systemClock, type Clock } from './clock.js';
import type { Deps, Handlers } from './http/handler.js';
import { getOrCreateSecret, SECRET_NAMES, type PepperName } from './auth/crypto/server-secrets.js';
import { KeyRing } from './auth/crypto/signing-keys.js';
import { liveGateways } from './gateway/store.js';
import { ticketKeyRing } from './gateway/tickets.js';
import type { SubstrateDriver } from './substrate/driver.js';
import { createSubstrate } from './substrate/index.js';
import { secretBoxFor } from './secrets/key-file.js';
import type { SecretBox } from './secrets/secret-box.js';
import { requestLog } from './http/logging.js';
import { mountLinkPages } from './link-pages/routes.js';
import { notFoundFallback, problemHandler } from './http/problems.js';
import { DATABASE_RETRY_AFTER_SECONDS } from './http/errors.js';
import { jsonBody } from './http/json-body.js';
import { series } from './http/series.js';
import { openApiValidator } from './http/validator.js';
import { handlers as allHandlers } from './handlers.js';
import { API_BASE_PATH, bundledSpec } from './spec.js';

const READY_TIMEOUT_MS = 1000;

export interface AppOptions {
  sql: Sql;
  config: Config;
  log: Logger;
  clock?: Clock;
  handlers?: Handlers;
  /** Defaults to ENCRYPTION_KEY, else the data directory's key file. */
  box?: SecretBox;
  /** Defaults to SUBSTRATE's driver over DATA_DIR (the worker's and the gateway's), where it is built. */
  substrate?: SubstrateDriver;
  /** Tests only: another spec and its operation index (a test-only route) instead of the bundled one. */
  contract?: { spec: object; operations: Record<string, BindableOperation> };
}

export interface App {
  express: Express;
  /** Resolves once /docs can answer (it is built in the background on first start). */
  docsReady: Promise<void>;
}

export function createApp(options: AppOptions): App {
  const { sql, config, log } = options;
  const clock = options.clock ?? systemClock;
  const peppers = new Map<PepperName, Promise<Buffer>>();
  const box = options.box ?? secretBoxFor(config);
  const deps: Deps = {
    sql,
    config,
    log,
    clock,
    box,
    keys: new KeyRing(sql, clock, box),
    ticketKeys: ticketKeyRing(sql, clock, box),
    substrate:
      options.substrate ??
      (config.substrate === 'kubernetes' ? null : createSubstrate(config.substrate, { dataDir: config.dataDir, lxd: config.lxd })),
    // Each read once per process, on first use, and kept (a failed read is tried again next time).
    pepper: (name = 'refreshSuccessor') => {
      let secret = peppers.get(name);
      if (!secret) {
        secret = getOrCreateSecret(sql, SECRET_NAMES[name]);
        peppers.set(name, secret);
        secret.catch(() => peppers.delete(name));
      }
      return secret;
    },
  };
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxyHops);
  app.set('etag', false);

  // Request id (X-Request-Id), the request's log line and the headers every answer carries.
  app.use(series([requestLog(log), defaultHeaders]));

  app.get(`${API_BASE_PATH}/openapi.json`, (_req, res) => {
    res.json(bundledSpec);
  });

  // One layer: the JSON body, if any; the validator, which answers 404/405 for unknown routes under
  // /api/v2 and checks the rest against the spec; then the operation it matched.
  app.use(
    series([
      jsonBody(API_BASE_PATH),
      ...openApiValidator(options.contract?.spec ?? bundledSpec, config.validateResponses),
      bindOperations(options.handlers ?? allHandlers, deps, API_BASE_PATH, options.contract?.operations),
    ]),
  );
  // Probes and docs after the API: a request to the API does not try their routes first, and the
  // API layer passes anything outside /api/v2 on at once.
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // Ready when the database answers within a second (DECISIONS.md §2): a probe must not hang for as
  // long as the database does.
  app.get('/readyz', async (_req, res) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      // The gateway runs as its own program (gateway/): it is reported, and its absence does not make
      // the API unready. A gateway counts while its heartbeat (every 5 s) is under 15 s old.
      const gateways = (await Promise.race([
        liveGateways(sql, new Date(clock.now().getTime() - 15_000)),
        new Promise<never>((_resolve, reject) => {
          timer = setTimeout(() => reject(new Error('no answer within 1 s')), READY_TIMEOUT_MS);
        }),
      ])) as number;
      res.json({
        status: 'ok',
        gateway: { status: gateways > 0 ? 'ok' : 'unavailable', instances: gateways },
      });
    } catch {
      res.status(503).set('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS)).json({ status: 'database unreachable' });
    } finally {
      clearTimeout(timer);
    }
  });

  let docsHtml: string | null = null;
  const docsReady = buildDocs(bundledSpec, join(config.dataDir, 'cache')).then(
    (html) => {
      docsHtml = html;
    },
    (err: unknown) => {
      log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not build /docs');
    },
  );
  app.get('/docs', (_req, res) => {
    if (docsHtml === null) {
      res.status(503).set('Retry-After', '2').type('text/plain').send('The API reference is being built.\n');
      return;
    }
    res.set('Content-Security-Policy', DOCS_CSP).type('html').send(docsHtml);
  });
  // What emailed links open when no dashboard is configured (server/src/link-pages/).
  mountLinkPages(app, config.platformName);
  app.use(notFoundFallback);
  app.use(problemHandler(log));
  return { express: app, docsReady };
}
