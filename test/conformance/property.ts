// Property runs against a live server: how many, how to replay one, and a cap on shrinking.
import * as fc from 'fast-check';
import type { WalkedOperation } from './spec-walk.js';

/** CONFORMANCE_RUNS sets the runs per operation and property (default 25). */
export const RUNS = Number(process.env.CONFORMANCE_RUNS ?? 25);
// Without credentials every input to a protected operation takes the same 401 path, so a few runs
// say all there is to say; raise this once the suite signs in.
const PROTECTED_RUNS = Math.min(RUNS, 5);
// Shrinking replays requests, some of them slow (password hashing): after this many runs past the
// first failure every further candidate passes, so fast-check reports the smallest failure so far.
const SHRINK_BUDGET = 60;
// CONFORMANCE_SEED replays a run whose seed a failure reported.
const SEED = process.env.CONFORMANCE_SEED ? { seed: Number(process.env.CONFORMANCE_SEED) } : {};

/** Asserts `predicate` (which throws on failure) for `examples` first, then for random values. */
export function checkProperty<T>(
  op: WalkedOperation,
  arb: fc.Arbitrary<T>,
  examples: T[],
  predicate: (value: T) => Promise<void>,
): Promise<void> {
  let sinceFailure = -1;
  return fc.assert(
    fc.asyncProperty(arb, async (value) => {
      if (sinceFailure >= SHRINK_BUDGET) return;
      if (sinceFailure >= 0) sinceFailure += 1;
      try {
        await predicate(value);
      } catch (err) {
        if (sinceFailure < 0) sinceFailure = 0;
        throw err;
      }
    }),
    { numRuns: op.requiresAuth ? PROTECTED_RUNS : RUNS, examples: examples.map((e): [T] => [e]), ...SEED },
  );
}
