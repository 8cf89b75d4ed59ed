// The API's JSON body parser (express.json), run only for requests under the API's base path that
// carry a body. Mounted with app.use(basePath, parser) it would cost every request a mount layer
// (req.url rewritten and restored) and a pass through the parser just to find there is nothing to
// read, which is most requests (GET, DELETE).
import express, { type RequestHandler } from 'express';

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
    if (hasBody && under.test(req.path)) parse(req, res, next);
    else next();
  };
}
