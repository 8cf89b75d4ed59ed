import { expect, it } from 'vitest';
import { decodeSlot } from './normalize.js';

it('runs at most two decodes at once, the rest in arrival order, and frees the slot on failure', async () => {
  let now = 0;
  let peak = 0;
  const started: number[] = [];
  const gates: (() => void)[] = [];
  const job = (n: number, fail = false) =>
    decodeSlot(async () => {
      started.push(n);
      now += 1;
      peak = Math.max(peak, now);
      await new Promise<void>((resolve) => gates.push(resolve));
      now -= 1;
      if (fail) throw new Error(`job ${n} failed`);
      return n;
    });
  const jobs = [job(1), job(2, true), job(3), job(4), job(5)];
  const settled = Promise.allSettled(jobs);
  for (let i = 0; i < 5; i += 1) {
    await new Promise((r) => setTimeout(r, 5));
    gates.shift()!();
  }
  const results = await settled;
  expect(peak).toBe(2);
  expect(started).toEqual([1, 2, 3, 4, 5]);
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
});
