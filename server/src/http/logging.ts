// One structured line per request. Only the route template is logged (never the raw URL, whose query
// may hold a token), and never headers or bodies.
import type { NextFunction, Request, Response } from 'express';
import { pino, type DestinationStream, type Logger } from 'pino';
import { bufferedStdout } from './log-format.js';
import { assignRequestId } from './request-id.js';
import { API_BASE_PATH } from '../spec.js';
import type { ValidatedRequest } from './validator.js';

/**
 * The process's logger: JSON lines on standard output (or `destination`, for tests). Lines are
 * written asynchronously and in batches (a request never waits for standard output to take its line;
 * see bufferedStdout), and what is still buffered is written out when the process exits: pino flushes
 * its destination on exit, whether the process stops or crashes.
 */
export function createLogger(level: string, destination: DestinationStream = bufferedStdout()): Logger {
  return pino(
    {
      level,
      base: undefined,
      // `time` is pino's own, milliseconds since the epoch (no ISO date formatted for every line).
      // Belt and braces: these keys are never logged on purpose, and are masked if one slips in.
      redact: {
        paths: ['authorization', 'password', 'token', 'refresh_token', 'secret', '*.authorization', '*.password', '*.token', '*.secret'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

const STARTED = Symbol('request started');
type Timed = Response & { [STARTED]: number };

/** The route template the request matched, without the base path. */
function routeOf(res: Response): string {
  const req = res.req as ValidatedRequest;
  return (
    (res.locals.routeTemplate as string | undefined) ??
    // Matched by the validator but refused before its operation ran (400).
    req.openapi?.openApiRoute.slice(API_BASE_PATH.length) ??
    // Routes outside the API (/healthz, /docs) are plain Express routes.
    (req.route?.path as string | undefined) ??
    '(unmatched)'
  );
}

/**
 * The first middleware: gives the request its id (res.locals.requestId and X-Request-Id, see
 * request-id.ts) and writes its line when the response is finished.
 */
export function requestLog(logger: Logger) {
  // The line's keys are fixed and none is a credential (the route template, never the URL), so it is
  // written by a child without the redaction pass, which costs as much as the rest of the line.
  const lines = logger.child({}, { redact: [] });
  // One listener for every response, not a closure per request: `this` is the response.
  function onFinish(this: Timed): void {
    lines.info(
      {
        request_id: this.locals.requestId as string,
        method: this.req.method,
        route: routeOf(this),
        status: this.statusCode,
        duration_ms: performance.now() - this[STARTED],
      },
      'request',
    );
  }
  // A response whose connection closed before it was sent: the client gave up (a timeout) or cut its
  // own upload short. Logged when the connection closes, as a warning, with how far the request got;
  // and again if the handler ends afterwards, with what it answered (a write may have committed).
  function onClose(this: Timed): void {
    if (this.writableFinished) return;
    const line = {
      request_id: this.locals.requestId as string,
      method: this.req.method,
      route: routeOf(this),
      duration_ms: performance.now() - this[STARTED],
      // False: the client stopped sending its body (an aborted upload).
      body_complete: this.req.complete,
    };
    lines.warn(line, 'request abandoned by the client');
    const end = this.end;
    this.end = function (this: Timed, ...args: unknown[]) {
      lines.warn(
        { ...line, status: this.statusCode, duration_ms: performance.now() - this[STARTED] },
        'abandoned request finished',
      );
      return (end as (...a: unknown[]) => Response).apply(this, args);
    } as Timed['end'];
  }
  return (req: Request, res: Response, next: NextFunction): void => {
    assignRequestId(req, res);
    if (lines.isLevelEnabled('info')) {
      (res as Timed)[STARTED] = performance.now();
      res.on('finish', onFinish);
    }
    if (lines.isLevelEnabled('warn')) {
      (res as Timed)[STARTED] ??= performance.now();
      res.on('close', onClose);
    }
    next();
  };
}
