import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';

// An incoming id is echoed only when it is short and plain, so it cannot inject into logs or headers
// (Node joins repeated headers with ", ", which is not plain).
const SANE = /^[A-Za-z0-9._:-]{1,128}$/;

/** Gives the request its id (an incoming sane X-Request-Id, or a new UUID) in res.locals and X-Request-Id. */
export function assignRequestId(req: Request, res: Response): void {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && SANE.test(incoming) ? incoming : randomUUID();
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
}
