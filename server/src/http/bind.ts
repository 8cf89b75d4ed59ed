// Binds every operation of the index to its handler on an Express router, with the route template
// recorded for the request log.
import { Router, type Request, type Response } from 'express';
import { operations, type OperationId } from '../../../generated/operations.js';
import { authenticate } from './authenticate.js';
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

export function bindOperations(handlers: Handlers, deps: Deps): Router {
  const router = Router();
  for (const id of Object.keys(operations) as OperationId[]) {
    const op = operations[id];
    const handler = handlers[id] as Handler<OperationId>;
    router[op.method](expressPath(op.path), async (req: Request, res: Response) => {
      res.locals.routeTemplate = op.path;
      const ctx = contextOf(req, res, deps);
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
