// Runs middlewares in turn as one Express layer. Every Express layer costs a router pass per request
// (path match, parameter processing, a check of the returned value for a promise); middlewares that
// every API request goes through anyway can share one.
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** One request's way through the steps. */
interface Pass {
  steps: readonly RequestHandler[];
  i: number;
  req: Request;
  res: Response;
  next: NextFunction;
  advance: NextFunction;
}

function advance(this: Pass, err?: unknown): void {
  if (err) {
    this.next(err);
    return;
  }
  const step = this.steps[this.i];
  this.i += 1;
  if (step === undefined) {
    this.next();
    return;
  }
  try {
    const out: unknown = step(this.req, this.res, this.advance);
    if (out instanceof Promise) out.catch(this.next);
  } catch (e) {
    this.next(e);
  }
}

/**
 * `steps` in order, as Express would run them: a step that calls next() hands on to the next one, and
 * the first error (passed to next, thrown, or a rejected returned promise) goes to `next`. Anything
 * passed to next (an error, or Express's 'route' and 'router') leaves the series, for Express to
 * treat as it would from any one layer.
 */
export function series(steps: readonly RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    const pass: Pass = { steps, i: 0, req, res, next, advance: next };
    // A bound function, not a closure: the TypeScript loader (tsx) names every function expression it
    // compiles, a defineProperty call on each one created, which is per request here.
    pass.advance = advance.bind(pass);
    pass.advance();
  };
}
