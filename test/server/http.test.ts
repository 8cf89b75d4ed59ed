// Cross-cutting HTTP behaviour: request ids, problem+json for failures, logs that hold no secret.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handlers } from '../../server/src/handlers.js';
import type { Handlers } from '../../server/src/http/handler.js';
import { startTestApp, type TestApp } from '../support/app.js';

let app: TestApp;
const SECRET = 'svc_rt_SuperSecretToken123';

const failing: Handlers = {
  ...handlers,
  // A crash whose message quotes SQL and a secret: none of it may reach the caller or the log.
  async publicIncidentsList() {
    throw Object.assign(new Error(`select * from users where token = '${SECRET}'`), { stack: 'at secretFrame (x.ts:1:1)' });
  },
  // A response that breaks the spec: a required field missing.
  async publicMaintenancesList() {
    return { status: 200, body: [{ id: 'not-a-uuid', title: 'x' }] as never };
  },
};

beforeAll(async () => {
  app = await startTestApp({ handlers: failing });
});
afterAll(() => app.close());

describe('X-Request-Id', () => {
  it('echoes a sane incoming id and mints one otherwise', async () => {
    const echoed = await fetch(`${app.baseUrl}/api/v2/public/capabilities`, { headers: { 'x-request-id': 'abc-123.x:y' } });
    expect(echoed.headers.get('x-request-id')).toBe('abc-123.x:y');
    for (const bad of ['has space', 'x'.repeat(129), 'quote"d']) {
      const res = await fetch(`${app.baseUrl}/api/v2/public/capabilities`, { headers: { 'x-request-id': bad } });
      expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('is on problem responses too, equal to the body request_id', async () => {
    const res = await fetch(`${app.baseUrl}/api/v2/nowhere`);
    expect(res.status).toBe(404);
    const body = (await res.json()) as { request_id: string; code: string; type: string; title: string };
    expect(body.request_id).toBe(res.headers.get('x-request-id'));
    expect(body).toMatchObject({ code: 'not-found', type: '/docs/errors#not-found', title: 'Not found' });
  });
});

describe('failures', () => {
  it('answers an unexpected error with a bare 500 internal-error and logs it without stack or secret', async () => {
    const res = await fetch(`${app.baseUrl}/api/v2/public/incidents`);
    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const text = await res.text();
    expect(text).not.toMatch(/select|secretFrame|SuperSecret/i);
    const body = JSON.parse(text) as { code: string; request_id: string };
    expect(body.code).toBe('internal-error');
    const line = app.logs.find((l) => l.msg === 'request failed' && l.request_id === body.request_id);
    expect(line).toBeDefined();
    expect(JSON.stringify(line)).not.toContain('secretFrame');
    expect(line!.route).toBe('/public/incidents');
  });

  it('turns a response that breaks the spec into a 500 (response validation is on in tests)', async () => {
    const res = await fetch(`${app.baseUrl}/api/v2/public/maintenances`);
    expect(res.status).toBe(500);
    expect(((await res.json()) as { code: string }).code).toBe('internal-error');
  });

  it('answers malformed JSON and a wrong media type with 400, an oversized body with 413, all problem+json', async () => {
    const post = (body: string, type = 'application/json') =>
      fetch(`${app.baseUrl}/api/v2/public/client-errors`, { method: 'POST', headers: { 'content-type': type }, body });
    const malformed = await post('{"error_id":');
    expect([malformed.status, ((await malformed.json()) as { code: string }).code]).toEqual([400, 'invalid-request']);
    const wrongType = await post('error_id=x', 'application/x-www-form-urlencoded');
    expect([wrongType.status, ((await wrongType.json()) as { code: string }).code]).toEqual([400, 'invalid-request']);
    const huge = await post(JSON.stringify({ error_id: 'x', message: 'm'.repeat(300_000) }));
    expect([huge.status, ((await huge.json()) as { code: string }).code]).toEqual([413, 'payload-too-large']);
  });

  it('reads a body sent in chunks (no Content-Length) as one sent whole', async () => {
    const chunked = (text: string) =>
      fetch(`${app.baseUrl}/api/v2/public/client-errors`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: new Blob([text]).stream(),
        duplex: 'half',
      } as RequestInit);
    const malformed = await chunked('{"error_id":');
    expect([malformed.status, ((await malformed.json()) as { code: string }).code]).toEqual([400, 'invalid-request']);
    const unknownField = await chunked(JSON.stringify({ error_id: 'x', message: 'm', extra: 1 }));
    expect(unknownField.status).toBe(400);
  });

  it('refuses U+0000 anywhere in a body with a pointer to it, and stores nothing', async () => {
    const before = await app.sql`select count(*)::int as n from client_errors`;
    const res = await fetch(`${app.baseUrl}/api/v2/public/client-errors`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ error_id: 'nul-test', message: 'a\u0000b' }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { errors: { location: string; pointer: string }[] };
    expect(body.errors).toEqual([expect.objectContaining({ location: 'body', pointer: '/message' })]);
    expect(await app.sql`select count(*)::int as n from client_errors`).toEqual(before);
  });

  it('parses no body outside /api/v2: a malformed one there is simply not found', async () => {
    const res = await fetch(`${app.baseUrl}/healthz`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"x":' });
    expect([res.status, ((await res.json()) as { code: string }).code]).toEqual([404, 'not-found']);
  });
});

describe('request log', () => {
  it('writes one line per request with route template, status and duration, and never a credential', async () => {
    const res = await fetch(`${app.baseUrl}/api/v2/public/captcha/config/secret-host.example?`, {
      headers: { authorization: `Bearer ${SECRET}`, cookie: `session=${SECRET}` },
    });
    const id = res.headers.get('x-request-id');
    const line = app.logs.find((l) => l.msg === 'request' && l.request_id === id);
    expect(line).toMatchObject({ method: 'GET', route: '/public/captcha/config/{hostname}', status: 200 });
    expect(typeof line!.duration_ms).toBe('number');
    expect(JSON.stringify(app.logs)).not.toContain(SECRET);
    expect(JSON.stringify(line)).not.toContain('secret-host');
  });
});

describe('/docs and the spec', () => {
  it('serves the bundled spec and the rendered reference with a CSP that forbids other origins', async () => {
    const spec = (await (await fetch(`${app.baseUrl}/api/v2/openapi.json`)).json()) as { servers: { url: string }[] };
    expect(spec.servers[0]!.url).toBe('/api/v2');
    let docs = await fetch(`${app.baseUrl}/docs`);
    for (let i = 0; docs.status === 503 && i < 100; i += 1) {
      await new Promise((r) => setTimeout(r, 200));
      docs = await fetch(`${app.baseUrl}/docs`);
    }
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await docs.text();
    expect(html).toContain('Hosting control plane API');
    expect(html).not.toMatch(/<script[^>]+src="https?:/);
  });
});
