// Runs middlewares in turn as one Express layer. Every Express layer costs a router pass per request
// (path match, parameter processing, a check of the returned value for a promise); middlewares that
// every API request goes through anyway can share one.
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * `steps` in order, as Express would run them: a step that calls next() hands on to the next one, and
 * the first error (passed to next, thrown, or a rejected returned promise) goes to `next`.
 */
export function series(steps: readonly RequestHandler[]): RequestHandler {
  const run = (i: number, req: Request, res: Response, next: NextFunction): void => {
    const step = steps[i];
    if (step === undefined) {
      next();
      return;
    }
    try {
      // Anything passed to next (an error, or Express's 'route' and 'router') leaves the series, for
      // Express to treat as it would from any one layer.
      const out: unknown = step(req, res, (err?: unknown) => (err ? next(err) : run(i + 1, req, res, next)));
      if (out instanceof Promise) out.catch(next);
    } catch (err) {
      next(err);
    }
  };
  return (req, res, next) => run(0, req, res, next);
}
