// The API's JSON body parser (express.json), run only for requests under the API's base path that
// carry a body. Mounted with app.use(basePath, parser) it would cost every request a mount layer
// (req.url rewritten and restored) and a pass through the parser just to find there is nothing to
// read, which is most requests (GET, DELETE).
import express, { type RequestHandler } from 'express';
import { ApiError } from './errors.js';

/** Requests above this are refused with 413 (payload-too-large) before they are parsed. */
const JSON_BODY_LIMIT = '256kb';
/**
 * A file write carries up to 1 MiB of text (seed §8), which JSON may escape up to six bytes a byte
 * (`\u0001`): its route alone takes bodies this large; the handler refuses content over 1 MiB.
 */
const FILE_WRITE_BODY_LIMIT = '7mb';
const FILE_WRITE_PATH = /\/service-instances\/[^/]+\/resources\/[^/]+\/files\/content\/?$/i;

export function jsonBody(basePath: string): RequestHandler {
  const type = ['application/json', 'application/*+json'];
  const parse = express.json({ limit: JSON_BODY_LIMIT, type });
  const parseFile = express.json({ limit: FILE_WRITE_BODY_LIMIT, type });
  // As Express mounts a path: case-insensitive, on a segment boundary.
  const under = new RegExp(`^${basePath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:/|$)`, 'i');
  return (req, res, next) => {
    const { headers } = req;
    // The parser's own test for a body (type-is hasBody): a Transfer-Encoding or a Content-Length.
    const hasBody = headers['transfer-encoding'] !== undefined || headers['content-length'] !== undefined;
    if (!hasBody || !under.test(req.path)) return next();
    const parser = req.method === 'PUT' && FILE_WRITE_PATH.test(req.path) ? parseFile : parse;
    parser(req, res, (err?: unknown) => next(err === undefined ? err : undecodable(err)));
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
