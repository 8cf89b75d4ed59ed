// Retries, timeouts, network failures and request shaping, against a scripted local server.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, test } from 'vitest';
import {
  createClient,
  isSvcApiError,
  isSvcError,
  isSvcNetworkError,
  isSvcTimeoutError,
  SDK_VERSION,
  SvcApiError,
  SvcError,
  SvcNetworkError,
  SvcTimeoutError,
} from '../src/index.js';
import {
  json,
  problem,
  startScriptedServer,
  type Script,
  type ScriptedServer,
} from './support/scripted-server.js';

let server: ScriptedServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function serve(script: Script) {
  server = await startScriptedServer(script);
  return server;
}

const report = { error_id: 'e1', message: 'boom' };

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describe('retries', () => {
  test('GET is retried after 503 and 429 and returns the eventual answer', async () => {
    const s = await serve((n, _req, res) => {
      if (n === 1) problem(res, 503, 'internal-error', { 'Retry-After': '0' });
      else if (n === 2) problem(res, 429, 'rate-limited', { 'Retry-After': '0' });
      else json(res, 200, []);
    });
    const client = createClient({ baseUrl: s.baseUrl });
    await expect(client.publicIncidentsList()).resolves.toEqual([]);
    expect(s.requests.map((r) => r.method)).toEqual(['GET', 'GET', 'GET']);
  });

  test('Retry-After is waited for', async () => {
    const s = await serve((n, _req, res) => {
      if (n === 1) problem(res, 429, 'rate-limited', { 'Retry-After': '1' });
      else json(res, 200, []);
    });
    const client = createClient({ baseUrl: s.baseUrl });
    const started = performance.now();
    await client.publicMaintenancesList();
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(s.requests).toHaveLength(2);
  });

  test('without Retry-After a 503 is retried with backoff', async () => {
    const s = await serve((n, _req, res) => (n < 3 ? res.writeHead(503).end() : json(res, 200, [])));
    const client = createClient({ baseUrl: s.baseUrl });
    await expect(client.publicIncidentsList()).resolves.toEqual([]);
    expect(s.requests).toHaveLength(3);
  });

  test('after `retries` retries the last error is thrown, with its Retry-After', async () => {
    const s = await serve((_n, _req, res) => problem(res, 503, 'internal-error', { 'Retry-After': '0' }));
    const client = createClient({ baseUrl: s.baseUrl });
    const err = await rejection(client.publicCapabilitiesGet());
    expect(err).toBeInstanceOf(SvcApiError);
    expect(err).toMatchObject({ status: 503, retryAfter: 0, requestId: 'req-503-internal-error' });
    expect(s.requests).toHaveLength(3);
  });

  test('the per-call and per-client retries override the default', async () => {
    const s = await serve((_n, _req, res) => problem(res, 429, 'rate-limited', { 'Retry-After': '0' }));
    await rejection(createClient({ baseUrl: s.baseUrl, retries: 0 }).publicIncidentsList());
    expect(s.requests).toHaveLength(1);
    await rejection(
      createClient({ baseUrl: s.baseUrl, retries: 0 }).publicIncidentsList(undefined, { retries: 1 }),
    );
    expect(s.requests).toHaveLength(3);
  });

  test('POST is not retried, whatever the status', async () => {
    const s = await serve((_n, _req, res) => problem(res, 503, 'internal-error', { 'Retry-After': '0' }));
    const client = createClient({ baseUrl: s.baseUrl });
    const err = await rejection(client.publicClientErrorsCreate({ body: report }));
    expect(isSvcApiError(err)).toBe(true);
    expect(s.requests).toHaveLength(1);
  });

  test('a 500 is not retried', async () => {
    const s = await serve((_n, _req, res) => problem(res, 500, 'internal-error'));
    const err = await rejection(createClient({ baseUrl: s.baseUrl }).publicIncidentsList());
    expect(isSvcApiError(err, 'internal-error')).toBe(true);
    expect(s.requests).toHaveLength(1);
  });
});

describe('timeouts and network failures', () => {
  test('an attempt without an answer times out with SvcTimeoutError', async () => {
    const s = await serve(() => {});
    const client = createClient({ baseUrl: s.baseUrl, timeoutMs: 100, retries: 0 });
    const err = await rejection(client.publicIncidentsList());
    expect(err).toBeInstanceOf(SvcTimeoutError);
    expect(err).toBeInstanceOf(SvcError);
    expect(isSvcTimeoutError(err)).toBe(true);
    expect((err as Error).message).toBe(
      `GET ${s.baseUrl}/api/v2/public/incidents got no answer within 100 ms`,
    );
  });

  test('the timeout applies per attempt, and a timed-out GET is retried', async () => {
    const s = await serve((n, _req, res) => (n === 1 ? undefined : json(res, 200, [])));
    const client = createClient({ baseUrl: s.baseUrl, timeoutMs: 150 });
    await expect(client.publicIncidentsList()).resolves.toEqual([]);
    expect(s.requests).toHaveLength(2);
  });

  test('a body that stops arriving also times out', async () => {
    const s = await serve((_n, _req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('[');
    });
    const client = createClient({ baseUrl: s.baseUrl, timeoutMs: 100 });
    const err = await rejection(client.publicIncidentsList(undefined, { retries: 0 }));
    expect(isSvcTimeoutError(err)).toBe(true);
  });

  test('a timed-out POST is not retried', async () => {
    const s = await serve(() => {});
    const err = await rejection(
      createClient({ baseUrl: s.baseUrl, timeoutMs: 100 }).publicClientErrorsCreate({ body: report }),
    );
    expect(isSvcTimeoutError(err)).toBe(true);
    expect(s.requests).toHaveLength(1);
  });

  test('a dropped connection is an SvcNetworkError, retried for GET', async () => {
    const s = await serve((_n, _req, res) => res.socket?.destroy());
    const err = await rejection(createClient({ baseUrl: s.baseUrl }).publicIncidentsList());
    expect(err).toBeInstanceOf(SvcNetworkError);
    expect(isSvcNetworkError(err)).toBe(true);
    expect((err as Error).message).toMatch(new RegExp(`^GET ${s.baseUrl}/api/v2/public/incidents failed: `));
    expect(s.requests).toHaveLength(3);
  });

  test('a refused connection names the cause', async () => {
    const s = await serve(() => {});
    const { baseUrl } = s;
    await s.close();
    server = null;
    const err = await rejection(createClient({ baseUrl, retries: 0 }).publicCapabilitiesGet());
    expect(isSvcNetworkError(err)).toBe(true);
    expect((err as Error).message).toContain('ECONNREFUSED');
  });

  test("the caller's abort ends the call with its reason and is not retried", async () => {
    const s = await serve(() => {});
    const controller = new AbortController();
    const pending = createClient({ baseUrl: s.baseUrl }).publicIncidentsList(undefined, {
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(new Error('user gave up')), 50);
    await expect(pending).rejects.toThrow('user gave up');
    expect(s.requests).toHaveLength(1);
  });

  test('an abort during the backoff wait ends it', async () => {
    const s = await serve((_n, _req, res) => problem(res, 503, 'internal-error', { 'Retry-After': '20' }));
    const pending = createClient({ baseUrl: s.baseUrl }).publicIncidentsList(undefined, {
      signal: AbortSignal.timeout(200),
    });
    await expect(pending).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(s.requests).toHaveLength(1);
  });
});

describe('error bodies that are not problem details', () => {
  test('an HTML 502 from a proxy is still an SvcApiError', async () => {
    const s = await serve((_n, _req, res) => {
      res.writeHead(502, { 'Content-Type': 'text/html', 'X-Request-Id': 'proxy-1' });
      res.end('<html>Bad gateway</html>');
    });
    const err = await rejection(createClient({ baseUrl: s.baseUrl }).publicIncidentsList());
    expect(isSvcApiError(err, 'unknown-error')).toBe(true);
    expect(err).toMatchObject({
      status: 502,
      title: 'Bad Gateway',
      detail: '<html>Bad gateway</html>',
      requestId: 'proxy-1',
      errors: [],
      details: null,
      retryAfter: null,
      problem: '<html>Bad gateway</html>',
      operationId: 'publicIncidentsList',
    });
  });

  test('an empty 404 is an SvcApiError too', async () => {
    const s = await serve((_n, _req, res) => res.writeHead(404).end());
    const err = await rejection(createClient({ baseUrl: s.baseUrl }).publicIncidentsList());
    expect(err).toMatchObject({ status: 404, code: 'unknown-error', requestId: null });
    expect(isSvcError(err)).toBe(true);
  });
});

describe('requests', () => {
  test('base URL, User-Agent, default and per-call headers', async () => {
    const s = await serve((_n, _req, res) => json(res, 200, []));
    const client = createClient({
      baseUrl: `${s.baseUrl}/`,
      userAgent: 'svcctl/9.9.9',
      headers: { 'X-Team': 'sdk' },
    });
    expect(client.baseUrl).toBe(`${s.baseUrl}/api/v2`);
    await client.publicIncidentsList({ headers: { 'X-Captcha-Token': 'solved' } });
    const [req] = s.requests;
    expect(req!.url).toBe('/api/v2/public/incidents');
    expect(req!.headers['user-agent']).toBe(`svcctl/9.9.9 svcplatform-sdk/${SDK_VERSION}`);
    expect(req!.headers['x-team']).toBe('sdk');
    expect(req!.headers['x-captcha-token']).toBe('solved');
    expect(req!.headers.authorization).toBeUndefined();
  });

  test('a fixed token is sent as a bearer token, also by the raw client', async () => {
    const s = await serve((_n, _req, res) => json(res, 200, { mail: true }));
    const client = createClient({ baseUrl: `${s.baseUrl}/api/v2`, token: 'svc_pat_x' });
    await client.publicCapabilitiesGet();
    const { data } = await client.raw.GET('/public/capabilities');
    expect(data).toEqual({ mail: true });
    expect(s.requests.map((r) => [r.url, r.headers.authorization])).toEqual([
      ['/api/v2/public/capabilities', 'Bearer svc_pat_x'],
      ['/api/v2/public/capabilities', 'Bearer svc_pat_x'],
    ]);
  });

  test('getToken is asked before every attempt', async () => {
    const s = await serve((n, _req, res) =>
      n === 1 ? problem(res, 503, 'internal-error', { 'Retry-After': '0' }) : json(res, 200, []),
    );
    let issued = 0;
    const client = createClient({ baseUrl: s.baseUrl, getToken: async () => `t${++issued}` });
    await client.publicIncidentsList();
    expect(s.requests.map((r) => r.headers.authorization)).toEqual(['Bearer t1', 'Bearer t2']);
  });

  test('a per-call Authorization header wins over the client token', async () => {
    const s = await serve((_n, _req, res) => json(res, 200, []));
    await createClient({ baseUrl: s.baseUrl, token: 'a' }).publicIncidentsList({
      headers: { Authorization: 'Bearer b' },
    });
    expect(s.requests[0]!.headers.authorization).toBe('Bearer b');
  });

  test('JSON bodies and encoded path parameters', async () => {
    const s = await serve((n, _req, res) => (n === 1 ? res.writeHead(204).end() : json(res, 200, {})));
    const client = createClient({ baseUrl: s.baseUrl });
    await expect(client.publicClientErrorsCreate({ body: report })).resolves.toBeUndefined();
    await client.publicCaptchaConfigGet({ path: { hostname: 'a b/c' } });
    expect(s.requests[0]).toMatchObject({ method: 'POST', body: JSON.stringify(report) });
    expect(s.requests[0]!.headers['content-type']).toBe('application/json');
    expect(s.requests[1]!.url).toBe('/api/v2/public/captcha/config/a%20b%2Fc');
  });

  test('the loose entry point, as svcctl calls it', async () => {
    const s = await serve((_n, _req, res) => json(res, 200, { enabled: false }));
    const client = createClient({ baseUrl: s.baseUrl });
    const fromFlags: string = 'publicCaptchaConfigGet';
    const params = {
      path: { hostname: 'x.example' },
      query: { verbose: true },
      header: { 'X-Captcha-Token': 'solved' },
      headers: { 'X-A': '1' },
    };
    await expect(client.request(fromFlags, params)).resolves.toEqual({ enabled: false });
    expect(s.requests[0]).toMatchObject({ url: '/api/v2/public/captcha/config/x.example?verbose=true' });
    expect(s.requests[0]!.headers['x-captcha-token']).toBe('solved');
    expect(s.requests[0]!.headers['x-a']).toBe('1');
    const unknown: string = 'nope';
    await expect(client.request(unknown)).rejects.toThrow(new TypeError('Unknown operation "nope"'));
    await expect(client.request(fromFlags, {})).rejects.toThrow(
      new TypeError('publicCaptchaConfigGet needs the path parameter "hostname"'),
    );
    const inherited: string = 'toString';
    await expect(client.request(inherited)).rejects.toThrow(TypeError);
    expect(s.requests).toHaveLength(1);
  });

  test('bad options are refused at construction', () => {
    expect(() => createClient({ baseUrl: 'localhost:8080' })).toThrow(TypeError);
    expect(() => createClient({ baseUrl: 'ftp://x' })).toThrow(TypeError);
    expect(() => createClient({ baseUrl: 'http://x', retries: -1 })).toThrow(TypeError);
    expect(() => createClient({ baseUrl: 'http://x', timeoutMs: 0 })).toThrow(TypeError);
  });

  test('SDK_VERSION matches package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(SDK_VERSION).toBe(pkg.version);
  });
});
