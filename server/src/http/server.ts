// The HTTP server for an Express app, creating each request and response with the app's prototypes.
//
// Express gives every request and response its own prototype on arrival (Object.setPrototypeOf in
// app.handle). V8 does not share hidden classes between objects whose prototype was changed: every
// property added afterwards (req.params, req.baseUrl, res.locals, req.openapi, ...; a dozen per request)
// makes a hidden class for that one object, and every property access on a request or response in the
// whole stack goes megamorphic and misses V8's caches. Measured here: three property additions on a
// re-prototyped request cost ~10 µs against ~0.3 µs on one created with the right prototype, and a whole
// request through the app ran 2–4× slower in CPU (see expressjs/express#5998). Created with Express's
// prototypes from the start, Express's setPrototypeOf changes nothing and the objects keep shared shapes.
import { readFileSync } from 'node:fs';
import { createServer, IncomingMessage, ServerResponse, type Server, type ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';

/**
 * Whether Node's request and response constructors can be called on an object made with another
 * prototype (they are plain constructor functions in Node 20 to 24). Were one to become a class, the
 * server falls back to Node's own objects: slower, not wrong.
 */
const constructorsCallable = [IncomingMessage, ServerResponse].every(
  (c) => !Function.prototype.toString.call(c).startsWith('class'),
);

/**
 * Limits that fit an API (README "Server limits"). A client has 15 s to send its headers and 60 s for
 * the whole request (uploads stream to the gateway, not here); Node checks both every 2 s, so a
 * slowloris connection is cut within seconds of its deadline, not the 30 s Node checks by default.
 * Keep-alive stays Node's 5 s.
 */
export const SERVER_LIMITS = {
  headersTimeout: 15_000,
  requestTimeout: 60_000,
  connectionsCheckingInterval: 2_000,
} as const satisfies ServerOptions;

/**
 * At most this many open connections: the process's open-file limit less room for what else it holds
 * open (database connections, files, the embedded PostgreSQL's pipes), so a flood of connections is
 * refused at accept instead of starving the process of descriptors (EMFILE).
 */
export function maxConnectionsFor(openFileLimit: number | null): number {
  if (openFileLimit === null) return 4096;
  return Math.max(64, Math.floor(openFileLimit * 0.8) - 256);
}

/** The soft RLIMIT_NOFILE, from /proc/self/limits (Linux); null where it cannot be read or is unlimited. */
export function openFileLimit(): number | null {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = Number(line?.split(/\s{2,}/)[1]);
    return Number.isFinite(soft) && soft > 0 ? soft : null;
  } catch {
    return null;
  }
}

/** `limits` other than SERVER_LIMITS only for tests that must see a deadline pass in a second. */
export function createHttpServer(app: Express, limits: ServerLimits = SERVER_LIMITS): Server {
  const server = createBareHttpServer(app, limits);
  server.maxConnections = maxConnectionsFor(openFileLimit());
  return server;
}

export type ServerLimits = Pick<
  ServerOptions,
  'headersTimeout' | 'requestTimeout' | 'connectionsCheckingInterval'
>;

function createBareHttpServer(app: Express, limits: ServerLimits): Server {
  if (!constructorsCallable) return createServer(limits, app);
  // `new AppRequest(socket)` makes an object whose prototype is app.request (which inherits from
  // IncomingMessage.prototype) and runs Node's constructor on it; the same for responses.
  function AppRequest(this: IncomingMessage, socket: Socket): void {
    (IncomingMessage as unknown as (this: IncomingMessage, socket: Socket) => void).call(this, socket);
  }
  AppRequest.prototype = app.request;
  function AppResponse(this: ServerResponse, ...args: unknown[]): void {
    (ServerResponse as unknown as (this: ServerResponse, ...args: unknown[]) => void).apply(this, args);
  }
  AppResponse.prototype = app.response;
  // Static inheritance, as `class extends` sets up. V8 sizes an object's in-object property slots from
  // its constructor and the constructors it inherits from: without this link a request would get a
  // handful, and the first property stored under a computed key once more than 12 live outside the
  // object (Node's own res[kUniqueHeaders], the router's req[matchedRoute], on every request) turns it
  // into a slow dictionary-mode object. With it, both stay fast objects from start to finish.
  Object.setPrototypeOf(AppRequest, IncomingMessage);
  Object.setPrototypeOf(AppResponse, ServerResponse);
  return createServer(
    {
      ...limits,
      IncomingMessage: AppRequest as unknown as typeof IncomingMessage,
      ServerResponse: AppResponse as unknown as typeof ServerResponse,
    },
    app,
  );
}
