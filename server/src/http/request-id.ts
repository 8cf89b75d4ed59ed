import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

// An incoming id is echoed only when it is short and plain, so it cannot inject into logs or headers.
const SANE = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(req: Request, res: Response, next: NextFunction): void {
  const incoming = req.get('x-request-id');
  const id = incoming && SANE.test(incoming) ? incoming : randomUUID();
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
}
