// Binds every operation of the index to its handler on an Express router, with the route template
// recorded for the request log.
import { Router, type Request, type Response } from 'express';
import { operations, type OperationId } from '../../../generated/operations.js';
import { authenticate } from './authenticate.js';
import { invalidFieldValue } from './errors.js';
import type { Deps, Handler, Handlers, RequestContext } from './handler.js';

export function expressPath(openApiPath: string): string {
  return openApiPath.replace(/\{([^}]+)\}/g, ':$1');
}

function contextOf(req: Request, res: Response, deps: Deps): RequestContext {
  return {
    ...deps,
    requestId: res.locals.requestId as string,
    ip: req.ip ?? req.socket.remoteAddress ?? 'unknown',
    userAgent: req.get('user-agent') ?? null,
    host: (req.hostname ?? '').toLowerCase(),
    headers: req.headers,
    header: (name) => req.get(name),
  };
}

/** The JSON pointer of the first string holding U+0000, which PostgreSQL text cannot store. */
export function findNul(value: unknown, pointer = ''): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? pointer || '/' : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const hit = findNul(value[i], `${pointer}/${i}`);
      if (hit !== null) return hit;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const hit = findNul(v, `${pointer}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
      if (hit !== null) return hit;
    }
  }
  return null;
}

function refuseNul(location: 'path' | 'query' | 'body', value: unknown): void {
  const hit = findNul(value);
  if (hit === null) return;
  const pointer = location === 'body' ? hit : hit.slice(1);
  throw invalidFieldValue('Text must not contain the NUL character (U+0000).', [
    { location, pointer, message: 'contains U+0000' },
  ]);
}

export function bindOperations(handlers: Handlers, deps: Deps): Router {
  const router = Router();
  for (const id of Object.keys(operations) as OperationId[]) {
    const op = operations[id];
    const handler = handlers[id] as Handler<OperationId>;
    router[op.method](expressPath(op.path), async (req: Request, res: Response) => {
      res.locals.routeTemplate = op.path;
      const ctx = contextOf(req, res, deps);
      refuseNul('path', req.params);
      refuseNul('query', req.query);
      refuseNul('body', req.body);
      const auth = op.security.length > 0 ? await authenticate(req.get('authorization'), ctx) : null;
      const result = (await handler({
        path: req.params as never,
        query: req.query as never,
        body: req.body as never,
        auth: auth as never,
        ctx,
      })) as { status: number; body?: unknown; contentType?: string; headers?: Record<string, string> };
      if (result.headers) res.set(result.headers);
      res.status(result.status);
      if (result.body === undefined) res.end();
      else if (Buffer.isBuffer(result.body)) res.type(result.contentType ?? 'application/octet-stream').send(result.body);
      else res.json(result.body);
    });
  }
  return router;
}
