// Headers every answer carries unless its route's spec says otherwise (DECISIONS.md §7, issue 26):
// `Cache-Control: no-store` (token answers included, RFC 6749 §5.1) and `X-Content-Type-Options:
// nosniff`; public reads say in their spec that a cache may keep them a minute; /docs may not be framed.
import { createClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledSpec } from '../../server/src/spec.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { newAccount } from '../support/auth.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

/** An SDK client that keeps the headers of every answer it received. */
function recording(token?: string) {
  const seen: Headers[] = [];
  const api = createClient({
    baseUrl: app.baseUrl,
    retries: 0,
    ...(token ? { token } : {}),
    fetch: async (request) => {
      const response = await fetch(request);
      seen.push(response.headers);
      return response;
    },
  });
  return { api, last: () => seen.at(-1)! };
}

describe('default headers', () => {
  it('marks token answers, personal reads and errors no-store and nosniff', async () => {
    const { session } = await newAccount(app, smtp, 'headers');
    const anon = recording();
    await anon.api.authRefresh({ body: { refresh_token: session.refresh_token } });
    const checks: Headers[] = [anon.last()];
    const me = recording(session.token);
    await me.api.meGet();
    checks.push(me.last());
    await me.api.meSessionsList();
    checks.push(me.last());
    await me.api.organizationGet({ path: { id: '00000000-0000-4000-8000-000000000000' } }).catch(() => undefined);
    checks.push(me.last());
    for (const h of checks) {
      expect([h.get('cache-control'), h.get('x-content-type-options')]).toEqual(['no-store', 'nosniff']);
    }
    const unknownRoute = await fetch(`${app.baseUrl}/api/v2/no/such/route`);
    expect([unknownRoute.headers.get('cache-control'), unknownRoute.headers.get('x-content-type-options')]).toEqual([
      'no-store',
      'nosniff',
    ]);
  });

  it('lets the public reads whose spec says so be cached a minute, and documents it', async () => {
    const anon = recording();
    await anon.api.catalogProductList();
    expect(anon.last().get('cache-control')).toBe('public, max-age=60');
    await anon.api.publicIncidentsList();
    expect(anon.last().get('cache-control')).toBe('public, max-age=60');
    expect(anon.last().get('x-content-type-options')).toBe('nosniff');
    const spec = bundledSpec as { paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>> };
    for (const path of ['/catalog/products', '/public/incidents']) {
      expect(Object.keys(spec.paths[path]!.get!.responses['200']!.headers ?? {})).toContain('Cache-Control');
    }
  });

  it('serves /docs with a CSP that forbids framing', async () => {
    let docs = await fetch(`${app.baseUrl}/docs`);
    for (let i = 0; docs.status === 503 && i < 100; i += 1) {
      await new Promise((r) => setTimeout(r, 200));
      docs = await fetch(`${app.baseUrl}/docs`);
    }
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(docs.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
