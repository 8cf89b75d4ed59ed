// The API's JSON body parser (express.json), run only for requests under the API's base path that
// carry a body. Mounted with app.use(basePath, parser) it would cost every request a mount layer
// (req.url rewritten and restored) and a pass through the parser just to find there is nothing to
// read, which is most requests (GET, DELETE).
import express, { type RequestHandler } from 'express';
import { ApiError } from './errors.js';

/** Requests above this are refused with 413 (payload-too-large) before they are parsed. */
const JSON_BODY_LIMIT = '256kb';

export function jsonBody(basePath: string): RequestHandler {
  const parse = express.json({ limit: JSON_BODY_LIMIT, type: ['application/json', 'application/*+json'] });
  // As Express mounts a path: case-insensitive, on a segment boundary.
  const under = new RegExp(`^${basePath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:/|$)`, 'i');
  return (req, res, next) => {
    const { headers } = req;
    // The parser's own test for a body (type-is hasBody): a Transfer-Encoding or a Content-Length.
    const hasBody = headers['transfer-encoding'] !== undefined || headers['content-length'] !== undefined;
    if (hasBody && under.test(req.path)) parse(req, res, (err?: unknown) => next(err === undefined ? err : undecodable(err)));
    else next();
  };
}

/**
 * A body its Content-Encoding (gzip, deflate, br) does not decode is the caller's fault: the parser
 * passes zlib's error on with status 400 and no `type` (its own errors carry one, problems.ts maps
 * those), which would otherwise answer 500 and log an error (issue 26).
 */
function undecodable(err: unknown): unknown {
  const e = err as { type?: unknown; status?: unknown };
  if (typeof err !== 'object' || err === null || e.type !== undefined || e.status !== 400) return err;
  return new ApiError(400, 'invalid-request', 'The request body does not decode as its Content-Encoding says.', {
    errors: [{ location: 'header', pointer: 'content-encoding', message: 'does not match the body' }],
  });
}
