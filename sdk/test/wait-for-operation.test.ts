// client.waitForOperation against a scripted server: polls until the operation ends, reports each
// change once, resolves a failed operation (an answer, not an error), rejects as other calls do for a
// 404, backs off between polls, stops at once on abort, and refreshes a session mid-wait. The real
// server's side is in cli/test/e2e/services.test.ts.
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, test } from 'vitest';
import { createClient, createSessionClient, isSvcApiError, type FinishedOperation } from '../src/index.js';
import {
  json,
  problem,
  startScriptedServer,
  type ScriptedServer,
  type SeenRequest,
} from './support/scripted-server.js';

const INSTANCE = '7d1e0000-0000-4000-8000-000000000001';
const OPERATION = '7d1e0000-0000-4000-8000-0000000000aa';
const PATH = `/api/v2/service-instances/${INSTANCE}/operations/${OPERATION}`;

let server: ScriptedServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

type Step = Partial<Pick<FinishedOperation, 'phase' | 'progress_percent' | 'error'>> & {
  status: FinishedOperation['status'] | 'queued' | 'running';
};

const operation = (step: Step) => ({
  id: OPERATION,
  kind: 'reinstall',
  service_instance_id: INSTANCE,
  resource_id: null,
  phase: null,
  progress_percent: null,
  error: null,
  created_at: '2026-11-21T12:00:00.000Z',
  updated_at: '2026-11-21T12:00:00.000Z',
  completed_at: step.status === 'succeeded' || step.status === 'failed' ? '2026-11-21T12:00:09.000Z' : null,
  ...step,
});

/** Answers the nth poll with the nth step (the last one repeats); `times` records when each arrived. */
function polls(steps: Step[], times: number[] = []) {
  return (n: number, _req: SeenRequest, res: ServerResponse) => {
    times.push(performance.now());
    json(res, 200, operation(steps[Math.min(n, steps.length) - 1]!));
  };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

const fast = { intervalMs: 5, maxIntervalMs: 10 };

describe('waitForOperation', () => {
  test('polls until the operation succeeds, reporting each change of status, phase or progress once', async () => {
    server = await startScriptedServer(
      polls([
        { status: 'queued' },
        { status: 'queued' },
        { status: 'running', phase: 'stop', progress_percent: 10 },
        { status: 'running', phase: 'stop', progress_percent: 10 },
        { status: 'running', phase: 'wipe', progress_percent: 30 },
        { status: 'running', phase: 'wipe', progress_percent: 55 },
        { status: 'succeeded', phase: 'boot', progress_percent: 100 },
      ]),
    );
    const client = createClient({ baseUrl: server.baseUrl, token: 'tok', retries: 0 });
    const seen: string[] = [];
    const done = await client.waitForOperation(INSTANCE, OPERATION, {
      ...fast,
      onProgress: (op) => seen.push(`${op.status} ${op.phase ?? '-'} ${op.progress_percent ?? '-'}`),
    });
    expect(done).toMatchObject({ id: OPERATION, status: 'succeeded', progress_percent: 100 });
    expect(seen).toEqual([
      'queued - -',
      'running stop 10',
      'running wipe 30',
      'running wipe 55',
      'succeeded boot 100',
    ]);
    expect(server.requests).toHaveLength(7);
    for (const r of server.requests) {
      expect([r.method, r.url, r.headers.authorization]).toEqual(['GET', PATH, 'Bearer tok']);
    }
  });

  test.each([
    ['failed', { status: 'failed', phase: 'install', progress_percent: 40, error: 'image download failed' }],
    ['cancelled', { status: 'cancelled' }],
  ] as const)('resolves a %s operation: the answer is that it ended so', async (_name, last) => {
    server = await startScriptedServer(polls([{ status: 'running', phase: 'install' }, last]));
    const client = createClient({ baseUrl: server.baseUrl, retries: 0 });
    const done = await client.waitForOperation(INSTANCE, OPERATION, fast);
    expect(done).toMatchObject(last);
    expect(server.requests).toHaveLength(2);
  });

  test('an operation already over is answered after one poll, without waiting', async () => {
    server = await startScriptedServer(polls([{ status: 'succeeded' }]));
    const client = createClient({ baseUrl: server.baseUrl, retries: 0 });
    const started = performance.now();
    await client.waitForOperation(INSTANCE, OPERATION, { intervalMs: 5_000 });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(server.requests).toHaveLength(1);
  });

  test('rejects with the SvcApiError a call would, and polls no more', async () => {
    server = await startScriptedServer((n, _req, res) =>
      n === 1 ? json(res, 200, operation({ status: 'running' })) : problem(res, 404, 'not-found'),
    );
    const client = createClient({ baseUrl: server.baseUrl, retries: 0 });
    const err = await rejection(client.waitForOperation(INSTANCE, OPERATION, fast));
    expect(isSvcApiError(err, 'not-found')).toBe(true);
    expect(err).toMatchObject({
      status: 404,
      operationId: 'serviceOperationGet',
      requestId: 'req-404-not-found',
    });
    expect(server.requests).toHaveLength(2);
  });

  test('a poll answered 503 is retried like any GET, and the wait goes on', async () => {
    server = await startScriptedServer((n, _req, res) => {
      if (n === 2) problem(res, 503, 'internal-error', { 'Retry-After': '0' });
      else json(res, 200, operation({ status: n === 1 ? 'running' : 'succeeded' }));
    });
    const client = createClient({ baseUrl: server.baseUrl, retries: 1 });
    await expect(client.waitForOperation(INSTANCE, OPERATION, fast)).resolves.toMatchObject({
      status: 'succeeded',
    });
    expect(server.requests).toHaveLength(3);
  });

  test('backs off: each unchanged poll waits longer, up to maxIntervalMs', async () => {
    const times: number[] = [];
    const running: Step = { status: 'running', phase: 'install', progress_percent: 50 };
    server = await startScriptedServer(
      polls([...Array<Step>(5).fill(running), { status: 'succeeded' }], times),
    );
    const client = createClient({ baseUrl: server.baseUrl, retries: 0 });
    await client.waitForOperation(INSTANCE, OPERATION, { intervalMs: 40, maxIntervalMs: 90 });
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    // Waits of 40, 60, 90, 90 and 90 ms (timers fire late, never early; a millisecond of slack for rounding).
    expect(gaps).toHaveLength(5);
    for (const [i, least] of [40, 60, 90, 90, 90].entries())
      expect(gaps[i]).toBeGreaterThanOrEqual(least - 1);
    // Capped: the last waits are not growing past the maximum by much.
    expect(gaps[4]).toBeLessThan(90 * 1.5 + 100);
  });

  test('a change starts the waits short again', async () => {
    const times: number[] = [];
    const at = (phase: string): Step => ({ status: 'running', phase, progress_percent: 50 });
    server = await startScriptedServer(
      polls([...Array<Step>(5).fill(at('stop')), at('wipe'), { status: 'succeeded' }], times),
    );
    const client = createClient({ baseUrl: server.baseUrl, retries: 0 });
    await client.waitForOperation(INSTANCE, OPERATION, { intervalMs: 40, maxIntervalMs: 1_000 });
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    // 40 after the first sighting, then 60, 90, 135 and 202 while unchanged; 40 again once the phase moved
    // (timers fire late, never early: the bound leaves 160 ms for lateness).
    expect(gaps).toHaveLength(6);
    expect(gaps[4]).toBeGreaterThanOrEqual(201);
    expect(gaps[5]).toBeGreaterThanOrEqual(39);
    expect(gaps[5]).toBeLessThan(200);
  });

  test('an abort between polls rejects with its reason at once, and nothing more is asked', async () => {
    server = await startScriptedServer(polls([{ status: 'running' }]));
    const client = createClient({ baseUrl: server.baseUrl, retries: 0 });
    const controller = new AbortController();
    const reason = new Error('user pressed Ctrl-C');
    const waiting = client.waitForOperation(INSTANCE, OPERATION, {
      intervalMs: 60_000,
      signal: controller.signal,
      onProgress: () => setTimeout(() => controller.abort(reason), 20),
    });
    const started = performance.now();
    await expect(waiting).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(server.requests).toHaveLength(1);
  });

  test('an abort during a poll that hangs rejects with its reason', async () => {
    // The second poll is never answered.
    server = await startScriptedServer((n, _req, res) => {
      if (n === 1) json(res, 200, operation({ status: 'running' }));
    });
    const client = createClient({ baseUrl: server.baseUrl, retries: 0 });
    const controller = new AbortController();
    const waiting = client.waitForOperation(INSTANCE, OPERATION, { ...fast, signal: controller.signal });
    await expect.poll(() => server!.requests.length).toBe(2);
    controller.abort(new Error('enough'));
    await expect(waiting).rejects.toThrow('enough');
  });

  test('an already aborted signal sends nothing', async () => {
    server = await startScriptedServer(polls([{ status: 'running' }]));
    const client = createClient({ baseUrl: server.baseUrl, retries: 0 });
    const err = await rejection(
      client.waitForOperation(INSTANCE, OPERATION, { signal: AbortSignal.abort(new Error('no')) }),
    );
    expect(err).toMatchObject({ message: 'no' });
    expect(server.requests).toHaveLength(0);
  });

  test('an error thrown by onProgress ends the wait with it', async () => {
    server = await startScriptedServer(polls([{ status: 'running' }]));
    const client = createClient({ baseUrl: server.baseUrl, retries: 0 });
    const waiting = client.waitForOperation(INSTANCE, OPERATION, {
      ...fast,
      onProgress: () => {
        throw new Error('bar broke');
      },
    });
    await expect(waiting).rejects.toThrow('bar broke');
    expect(server.requests).toHaveLength(1);
  });

  test.each([
    ['a zero interval', { intervalMs: 0 }],
    ['a negative interval', { intervalMs: -1 }],
    ['an endless maximum', { maxIntervalMs: Infinity }],
  ])('refuses %s before sending anything', async (_name, options) => {
    server = await startScriptedServer(polls([{ status: 'running' }]));
    const client = createClient({ baseUrl: server.baseUrl, retries: 0 });
    await expect(client.waitForOperation(INSTANCE, OPERATION, options)).rejects.toThrow(TypeError);
    expect(server.requests).toHaveLength(0);
  });

  test('a session client refreshes its token mid-wait and goes on polling', async () => {
    const SESSION = '7d1e0000-0000-4000-8000-0000000000ee';
    server = await startScriptedServer((_n, req, res) => {
      if (req.url.endsWith('/auth/refresh')) {
        json(res, 200, { token: 'fresh', refresh_token: 'svc_rt_2', session_id: SESSION });
      } else if (req.headers.authorization !== 'Bearer fresh') {
        problem(res, 401, 'unauthenticated');
      } else {
        json(res, 200, operation({ status: 'succeeded' }));
      }
    });
    const saved: string[] = [];
    const client = createSessionClient({
      baseUrl: server.baseUrl,
      retries: 0,
      refreshAheadMs: false,
      session: { token: 'stale', refreshToken: 'svc_rt_1', sessionId: SESSION },
      onTokens: (tokens) => void saved.push(tokens.refreshToken),
    });
    await expect(client.waitForOperation(INSTANCE, OPERATION, fast)).resolves.toMatchObject({
      status: 'succeeded',
    });
    expect(saved).toEqual(['svc_rt_2']);
    expect(server.requests.map((r) => `${r.method} ${r.headers.authorization}`)).toEqual([
      'GET Bearer stale',
      'POST Bearer stale',
      'GET Bearer fresh',
    ]);
  });
});
