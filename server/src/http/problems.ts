// The one place errors become responses: ApiError as it is, the validator's and body parser's errors
// rewritten into the same problem+json shape, anything else a 500 that logs its cause and says nothing.
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../db/client.js';
import { asInvalidPath } from './file-paths.js';
import { ApiError, internalError, problemBody, serviceUnavailable, type ValidationIssue } from './errors.js';

interface ValidatorError {
  status: number;
  message: string;
  path?: string;
  errors?: { path?: string; message?: string }[];
  headers?: Record<string, string>;
}

const LOCATIONS: Record<string, ValidationIssue['location']> = {
  body: 'body',
  query: 'query',
  params: 'path',
  path: 'path',
  headers: 'header',
  header: 'header',
};

/**
 * `/body/name/0` → body, `/name/0`; `/query/page` → query, `page`. A path without a location is within
 * the body: the validator checks a body of a discriminated `oneOf` (a game action's `kind`) with the
 * branch's own schema, whose paths start at the body.
 */
export function toIssue(path: string | undefined, message: string | undefined): ValidationIssue {
  const parts = (path ?? '').replace(/^\.?\/?/, '').split(/[./]/);
  const located = LOCATIONS[parts[0] ?? ''];
  const location = located ?? 'body';
  const rest = located ? parts.slice(1) : parts.filter(Boolean);
  const pointer = location === 'body' ? `/${rest.join('/')}`.replace(/\/$/, '') || '/' : rest.join('.');
  return { location, pointer, message: message ?? 'is invalid' };
}

/** The validator's refusal of a discriminator value no branch takes: about that body field. */
function unknownBranch(message: string | undefined): ValidationIssue | null {
  const m = /^'([^']+)' must be equal to one of the allowed values: (.*)\.$/.exec(message ?? '');
  return m ? { location: 'body', pointer: `/${m[1]!}`, message: `must be one of: ${m[2]!}` } : null;
}

function fromValidator(err: ValidatorError, route: string): ApiError | null {
  if (typeof err.status !== 'number' || !('errors' in err) || !Array.isArray(err.errors)) return null;
  switch (err.status) {
    case 400: {
      // Unsafe file paths answer one code, whichever layer finds them (file-paths.ts).
      const errors = err.errors.map((e) => unknownBranch(e.message) ?? toIssue(e.path, e.message));
      return (
        asInvalidPath(route, errors) ??
        new ApiError(400, 'invalid-request', 'The request does not match the API contract.', { errors })
      );
    }
    case 404:
      return new ApiError(404, 'not-found', 'No such route.');
    case 405:
      return new ApiError(405, 'method-not-allowed', err.message, { headers: err.headers ?? {} });
    case 413:
      return new ApiError(413, 'payload-too-large', 'The request body is too large.');
    case 415:
      // A missing body, or one of a media type the operation does not take, fails the contract like any
      // other body problem (DECISIONS.md §2). JSON everywhere, multipart/form-data for uploads (§1).
      return new ApiError(
        400,
        'invalid-request',
        'The request body is missing or of the wrong type: send JSON (Content-Type: application/json), or multipart/form-data to an upload.',
        { errors: [{ location: 'header', pointer: 'content-type', message: 'is not a media type this operation takes' }] },
      );
    default:
      // A response that breaks the spec, or anything else the validator reports, is our fault.
      return null;
  }
}

function fromBodyParser(err: { type?: string; status?: number }): ApiError | null {
  if (err.type === 'entity.parse.failed') return new ApiError(400, 'invalid-request', 'The body is not valid JSON.');
  if (err.type === 'entity.too.large') return new ApiError(413, 'payload-too-large', 'The request body is too large.');
  if (err.type === 'encoding.unsupported' || err.type === 'charset.unsupported') {
    return new ApiError(400, 'invalid-request', 'The request body must be UTF-8 JSON.');
  }
  return null;
}

// Our own credential formats (DECISIONS.md §3) and JWTs, wherever an error message quotes one.
const CREDENTIALS = /svc_(?:rt|pat|app)_[A-Za-z0-9_-]+|eyJ[\w-]+\.[\w-]+\.[\w-]*/g;
export const scrubCredentials = (s: string): string => s.replace(CREDENTIALS, '[redacted]');

// What a 5xx log line may say of its cause: no stack, no SQL, no parameter values (PostgreSQL's
// `detail` can quote them), just enough to find the failure by request id.
export function describeCause(cause: unknown): Record<string, unknown> {
  if (!(cause instanceof Error)) return { name: typeof cause };
  const e = cause as Error & { code?: unknown; table_name?: unknown; constraint_name?: unknown; errors?: unknown };
  const out: Record<string, unknown> = { name: e.name, message: scrubCredentials(e.message) };
  if (typeof e.code === 'string') out.code = e.code;
  if (typeof e.table_name === 'string') out.table = e.table_name;
  if (typeof e.constraint_name === 'string') out.constraint = e.constraint_name;
  if (Array.isArray(e.errors)) {
    out.errors = e.errors.map((x: { path?: string; message?: string }) =>
      scrubCredentials(`${x.path ?? ''} ${x.message ?? ''}`.trim()),
    );
  }
  return out;
}

export function problemHandler(log: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const requestId = (res.locals.requestId as string | undefined) ?? 'unknown';
    // The client cut its own request short (an aborted upload): nothing failed here and nobody is
    // listening. The request log says so as a warning when the connection closes (logging.ts).
    if (!req.complete && (req.readableAborted || req.socket.destroyed || (err as { type?: string }).type === 'request.aborted')) {
      res.destroy();
      return;
    }
    let apiError =
      err instanceof ApiError
        ? err
        : (fromBodyParser(err as { type?: string }) ?? fromValidator(err as ValidatorError, req.path) ?? internalError(err));
    // A lost or silent database is the service's state, not a fault of this request (DECISIONS.md §2),
    // wherever the handler let it through.
    if (apiError.code === 'internal-error' && isDatabaseUnavailable(apiError.extra.cause ?? err)) {
      apiError = serviceUnavailable(apiError.extra.cause ?? err);
    }
    if (apiError.code === 'service-unavailable') {
      log.warn(
        {
          request_id: requestId,
          route: (res.locals.routeTemplate as string | undefined) ?? '(unmatched)',
          cause: describeCause(apiError.extra.cause ?? err),
        },
        'database unavailable',
      );
    } else if (apiError.status >= 500) {
      const cause = apiError.extra.cause ?? err;
      log.error(
        {
          request_id: requestId,
          route: (res.locals.routeTemplate as string | undefined) ?? '(unmatched)',
          cause: describeCause(cause),
        },
        'request failed',
      );
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(apiError.status);
    if (apiError.extra.headers) res.set(apiError.extra.headers);
    res.type('application/problem+json').send(JSON.stringify(problemBody(apiError, requestId)));
  };
}

export function notFoundFallback(_req: Request, _res: Response, next: NextFunction): void {
  next(new ApiError(404, 'not-found', 'No such route.'));
}
