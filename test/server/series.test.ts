// series(): middlewares run in turn as one layer, with Express's error conventions.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { series } from '../../server/src/http/series.js';

const req = {} as Request;
const res = {} as Response;

/** Runs `handler` and resolves with what it passed to next (or 'not called' after a tick). */
function outcome(handler: RequestHandler): Promise<unknown> {
  return new Promise((resolve) => {
    const next: NextFunction = (err?: unknown) => resolve(err === undefined ? 'next()' : err);
    void handler(req, res, next);
    setTimeout(() => resolve('not called'), 20);
  });
}

describe('series', () => {
  it('runs every step in order, then calls next once', async () => {
    const seen: number[] = [];
    const step = (n: number): RequestHandler => (_q, _s, next) => {
      seen.push(n);
      next();
    };
    expect(await outcome(series([step(1), step(2), step(3)]))).toBe('next()');
    expect(seen).toEqual([1, 2, 3]);
    expect(await outcome(series([]))).toBe('next()');
  });

  it('stops at the first error: passed to next, thrown, or a rejected promise', async () => {
    const boom = new Error('boom');
    let after = 0;
    const later: RequestHandler = (_q, _s, next) => {
      after += 1;
      next();
    };
    expect(await outcome(series([(_q, _s, next) => next(boom), later]))).toBe(boom);
    expect(
      await outcome(
        series([
          () => {
            throw boom;
          },
          later,
        ]),
      ),
    ).toBe(boom);
    expect(await outcome(series([async () => Promise.reject(boom), later]))).toBe(boom);
    expect(after).toBe(0);
  });

  it("hands Express's 'route' and 'router' on unchanged", async () => {
    expect(await outcome(series([(_q, _s, next) => next('route')]))).toBe('route');
    expect(await outcome(series([(_q, _s, next) => next('router')]))).toBe('router');
  });

  it('waits for a step that calls next later', async () => {
    const slow: RequestHandler = (_q, _s, next) => void setTimeout(() => next(), 5);
    expect(await outcome(series([slow, (_q, _s, next) => next()]))).toBe('next()');
  });

  it('ends without next when a step answers', async () => {
    expect(await outcome(series([() => undefined, () => { throw new Error('not reached'); }]))).toBe('not called');
  });
});
