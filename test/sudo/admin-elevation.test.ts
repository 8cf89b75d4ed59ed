// Every route under /admin/ needs an account holding a system permission, then an elevated session
// (seed document 1, "Authentication"; DECISIONS.md §2 and §4), checked once, before any handler runs:
// an account that is no staff learns it lacks the permission (403 forbidden), elevated or not; staff
// are asked to elevate (403 elevation-required). The staff routes come with later issues, so this
// test adds a route of its own to a copy of the spec.
import { createClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bundledSpec } from '../../server/src/spec.js';
import { handlers } from '../../server/src/handlers.js';
import type { Handlers } from '../../server/src/http/handler.js';
import { buildOperationIndex } from '../../scripts/gen/operation-index.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { newAccount } from '../support/auth.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let calls = 0;

const spec = structuredClone(bundledSpec) as { paths: Record<string, unknown> };
spec.paths['/admin/test/ping'] = {
  post: {
    operationId: 'adminTestPing',
    'x-callers': ['session'],
    'x-capability': null,
    summary: 'Test-only staff route',
    responses: {
      '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } },
      '401': { $ref: '#/components/responses/Unauthorized' },
      '403': { $ref: '#/components/responses/Forbidden' },
    },
  },
};
const operations = Object.fromEntries(buildOperationIndex(spec).map((o) => [o.operationId, o]));
const testHandlers = {
  ...handlers,
  adminTestPing: async () => {
    calls += 1;
    return { status: 200, body: { ok: true } };
  },
} as unknown as Handlers;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' },
    handlers: testHandlers,
    contract: { spec, operations },
  });
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const ping = (token?: string) =>
  fetch(`${app.baseUrl}/api/v2/admin/test/ping`, {
    method: 'POST',
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });

/** A new account made staff (any system permission but one the route needs: the gate asks only "staff?"). */
async function staffAccount(tag: string) {
  const account = await newAccount(app, smtp, tag);
  await app.sql`update users set system_permissions = '{view_all_orders}' where id = ${account.session.user.id}`;
  return account;
}

it('refuses an account holding no system permission with 403 forbidden, elevated or not', async () => {
  const { session } = await newAccount(app, smtp, 'not-staff');
  for (const token of [
    session.token,
    (
      await createClient({ baseUrl: app.baseUrl, token: session.token, retries: 0 }).sudoSetup({
        body: { pin: '424242' },
      })
    ).token,
  ]) {
    const res = await ping(token);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ status: 403, code: 'forbidden' });
  }
  expect(calls).toBe(0);
});

it('refuses an anonymous caller with 401 and a staff, un-elevated one with 403 elevation-required', async () => {
  expect((await ping()).status).toBe(401);
  const { session } = await staffAccount('staff');
  const res = await ping(session.token);
  expect(res.status).toBe(403);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(await res.json()).toMatchObject({ status: 403, code: 'elevation-required' });
  expect(calls).toBe(0);
});

it('lets an elevated session through, and not its exited, un-elevated successor', async () => {
  const { session } = await staffAccount('staff2');
  const api = createClient({ baseUrl: app.baseUrl, token: session.token, retries: 0 });
  const { token } = await api.sudoSetup({ body: { pin: '424242' } });
  const res = await ping(token);
  expect([res.status, await res.json()]).toEqual([200, { ok: true }]);
  expect(calls).toBe(1);
  // An exited (un-elevated) token of the same session is refused again.
  const { token: plain } = await createClient({ baseUrl: app.baseUrl, token, retries: 0 }).sudoExit();
  expect((await ping(plain)).status).toBe(403);
  expect(calls).toBe(1);
});
