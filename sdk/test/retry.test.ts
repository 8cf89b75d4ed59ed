// The retry policy as tables: [name, { given, want }], with random and sleep injected.
import { describe, expect, test } from 'vitest';
import {
  DEFAULT_RETRY_POLICY,
  parseRetryAfter,
  retryDelayMs,
  withRetries,
  type AttemptFailure,
  type AttemptResult,
} from '../src/retry.js';

const policy = { retries: 3, baseDelayMs: 100, maxDelayMs: 1_000, maxRetryAfterMs: 30_000 };
const status = (s: number, retryAfterSeconds: number | null = null): AttemptFailure => ({
  kind: 'status',
  status: s,
  retryAfterSeconds,
});

describe('retryDelayMs', () => {
  const cases: [
    string,
    { method: string; failure: AttemptFailure; retriesDone: number; random: number; want: number | null },
  ][] = [
    [
      '503 on GET backs off below base',
      { method: 'GET', failure: status(503), retriesDone: 0, random: 0.5, want: 50 },
    ],
    [
      'the ceiling doubles per retry',
      { method: 'GET', failure: status(503), retriesDone: 2, random: 0.5, want: 200 },
    ],
    [
      'full jitter may wait not at all',
      { method: 'GET', failure: status(429), retriesDone: 1, random: 0, want: 0 },
    ],
    [
      'the ceiling stops at maxDelayMs',
      { method: 'GET', failure: { kind: 'network' }, retriesDone: 2, random: 0.999, want: 399 },
    ],
    [
      'Retry-After wins over backoff',
      { method: 'GET', failure: status(429, 7), retriesDone: 0, random: 0.5, want: 7_000 },
    ],
    [
      'Retry-After is capped',
      { method: 'PUT', failure: status(503, 3600), retriesDone: 0, random: 0.5, want: 30_000 },
    ],
    [
      'Retry-After 0 retries at once',
      { method: 'GET', failure: status(503, 0), retriesDone: 0, random: 0.5, want: 0 },
    ],
    [
      'connection failure on DELETE',
      { method: 'DELETE', failure: { kind: 'network' }, retriesDone: 0, random: 1, want: 100 },
    ],
    [
      'timeout on HEAD',
      { method: 'head', failure: { kind: 'timeout' }, retriesDone: 0, random: 0.5, want: 50 },
    ],
    [
      'OPTIONS is idempotent',
      { method: 'OPTIONS', failure: status(503), retriesDone: 0, random: 0.5, want: 50 },
    ],
    [
      'POST is never retried',
      { method: 'POST', failure: status(503, 1), retriesDone: 0, random: 0.5, want: null },
    ],
    [
      'POST is not retried after a connection failure',
      { method: 'POST', failure: { kind: 'network' }, retriesDone: 0, random: 0.5, want: null },
    ],
    [
      'PATCH is never retried',
      { method: 'PATCH', failure: status(429, 1), retriesDone: 0, random: 0.5, want: null },
    ],
    ['500 is an answer', { method: 'GET', failure: status(500), retriesDone: 0, random: 0.5, want: null }],
    ['502 is an answer', { method: 'GET', failure: status(502), retriesDone: 0, random: 0.5, want: null }],
    ['404 is an answer', { method: 'GET', failure: status(404), retriesDone: 0, random: 0.5, want: null }],
    ['retries run out', { method: 'GET', failure: status(503), retriesDone: 3, random: 0.5, want: null }],
  ];
  test.each(cases)('%s', (_name, { method, failure, retriesDone, random, want }) => {
    expect(retryDelayMs({ method, failure, retriesDone, policy, random: () => random })).toBe(want);
  });

  // A POST carrying an Idempotency-Key (a create, an operation start): a repeat answers the first answer.
  const keyedCases: [string, { method: string; failure: AttemptFailure; want: number | null }][] = [
    ['a keyed POST after a connection failure', { method: 'POST', failure: { kind: 'network' }, want: 50 }],
    ['a keyed POST after a timeout', { method: 'POST', failure: { kind: 'timeout' }, want: 50 }],
    ['a keyed POST after 429 honours Retry-After', { method: 'POST', failure: status(429, 2), want: 2_000 }],
    ['a keyed POST after 500', { method: 'POST', failure: status(500), want: 50 }],
    ['a keyed POST after 502', { method: 'POST', failure: status(502), want: 50 }],
    ['a keyed POST after 503 honours Retry-After', { method: 'POST', failure: status(503, 2), want: 2_000 }],
    ['a keyed POST refused (409) is an answer', { method: 'POST', failure: status(409), want: null }],
    ['a keyed POST refused (422) is an answer', { method: 'POST', failure: status(422), want: null }],
  ];
  test.each(keyedCases)('%s', (_name, { method, failure, want }) => {
    expect(retryDelayMs({ method, failure, retriesDone: 0, policy, random: () => 0.5, keyed: true })).toBe(want);
  });

  test('the default policy retries twice and caps Retry-After at 30 s', () => {
    expect(DEFAULT_RETRY_POLICY).toMatchObject({ retries: 2, maxRetryAfterMs: 30_000 });
  });
});

describe('parseRetryAfter', () => {
  const now = new Date('2026-11-21T12:00:00.000Z');
  const cases: [string, { given: string | null; want: number | null }][] = [
    ['absent', { given: null, want: null }],
    ['delay-seconds', { given: '120', want: 120 }],
    ['zero', { given: '0', want: 0 }],
    ['padded', { given: ' 3 ', want: 3 }],
    ['an HTTP-date ahead', { given: 'Sat, 21 Nov 2026 12:00:05 GMT', want: 5 }],
    ['an HTTP-date passed', { given: 'Sat, 21 Nov 2026 11:00:00 GMT', want: 0 }],
    ['negative is garbage', { given: '-5', want: null }],
    ['a fraction is garbage', { given: '1.5', want: null }],
    ['garbage', { given: 'soon', want: null }],
  ];
  test.each(cases)('%s', (_name, { given, want }) => {
    expect(parseRetryAfter(given, now)).toBe(want);
  });
});

describe('withRetries', () => {
  function script(results: AttemptResult<string>[]) {
    const attempts: number[] = [];
    const sleeps: number[] = [];
    const run = (method: string, retries = 2) =>
      withRetries(
        async (n) => {
          attempts.push(n);
          return results[n - 1] ?? { ok: true, value: 'late' };
        },
        {
          method,
          policy: { ...policy, retries },
          random: () => 0.5,
          sleep: async (ms) => {
            sleeps.push(ms);
          },
        },
      );
    return { run, attempts, sleeps };
  }
  const fail = (failure: AttemptFailure): AttemptResult<string> => ({
    ok: false,
    error: new Error(failure.kind),
    failure,
  });

  test('retries until an attempt succeeds, sleeping between', async () => {
    const { run, attempts, sleeps } = script([
      fail(status(503)),
      fail(status(429, 2)),
      { ok: true, value: 'done' },
    ]);
    await expect(run('GET')).resolves.toBe('done');
    expect(attempts).toEqual([1, 2, 3]);
    expect(sleeps).toEqual([50, 2_000]);
  });

  test('throws the last error once retries run out', async () => {
    const { run, attempts } = script([
      fail({ kind: 'network' }),
      fail({ kind: 'network' }),
      fail({ kind: 'timeout' }),
    ]);
    await expect(run('GET')).rejects.toThrow('timeout');
    expect(attempts).toEqual([1, 2, 3]);
  });

  test('POST gets one attempt', async () => {
    const { run, attempts, sleeps } = script([fail(status(503, 0))]);
    await expect(run('POST')).rejects.toThrow('status');
    expect(attempts).toEqual([1]);
    expect(sleeps).toEqual([]);
  });

  test('retries 0 means one attempt', async () => {
    const { run, attempts } = script([fail(status(503))]);
    await expect(run('GET', 0)).rejects.toThrow('status');
    expect(attempts).toEqual([1]);
  });
});
