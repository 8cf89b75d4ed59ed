// Runs middlewares in turn as one Express layer. Every Express layer costs a router pass per request
// (path match, parameter processing, a check of the returned value for a promise); middlewares that
// every API request goes through anyway can share one.
import type { RequestHandler } from 'express';

/**
 * `steps` in order, as Express would run them: a step that calls next() hands on to the next one, and
 * the first error (passed to next, thrown, or a rejected returned promise) goes to `next`. Anything
 * passed to next (an error, or Express's 'route' and 'router') leaves the series, for Express to
 * treat as it would from any one layer.
 */
export function series(steps: readonly RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    // One continuation per request, shared by the steps.
    let i = 0;
    const advance = (err?: unknown): void => {
      if (err) {
        next(err);
        return;
      }
      const step = steps[i];
      i += 1;
      if (step === undefined) {
        next();
        return;
      }
      try {
        const out: unknown = step(req, res, advance);
        if (out instanceof Promise) out.catch(next);
      } catch (e) {
        next(e);
      }
    };
    advance();
  };
}
