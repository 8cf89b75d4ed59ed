// The poll (GET .../operations/{id}) checks its caller's session in its own statement rather than in a
// read of its own (authz/deferred-session.ts, http/bind.ts): a session that has ended gets exactly the 401
// of any other route, whatever the service or operation named, and a live one polls as before. The
// second half runs bind.ts's backstop on routes of a copy of the spec whose handlers never settle the
// check: the ordinary read decides, and a handler's 404 never reaches an ended session.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledSpec } from '../../server/src/spec.js';
import { handlers } from '../../server/src/handlers.js';
import { DeferredSessionCheck } from '../../server/src/authz/deferred-session.js';
import { findServiceAccess } from '../../server/src/features/services/store.js';
import { bindOperations } from '../../server/src/http/bind.js';
import type { Deps, Handlers } from '../../server/src/http/handler.js';
import { notFound } from '../../server/src/http/errors.js';
import { buildOperationIndex } from '../../scripts/gen/operation-index.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { logIn } from '../support/auth.js';
import { signedIn, type Caller } from '../support/organizations.js';
import { provisionService, serviceCustomer, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let smtp: TestSmtp;

beforeAll(async () => {
  smtp = await startTestSmtp();
});
afterAll(async () => {
  await smtp.close();
});

/** Status, WWW-Authenticate and body of a GET, the request's own id left out of the body. */
async function answer(app: TestApp, path: string, token: string) {
  const res = await fetch(`${app.baseUrl}/api/v2${path}`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json()) as Record<string, unknown>;
  delete body.request_id;
  delete body.instance;
  return { status: res.status, authenticate: res.headers.get('www-authenticate'), body };
}

describe('the poll', () => {
  let app: TestApp;
  let owner: Caller;
  let vps: Provisioned;
  const poll = (serviceId: string, operationId: string) =>
    `/service-instances/${serviceId}/operations/${operationId}`;

  beforeAll(async () => {
    app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
    const customer = await serviceCustomer(app, smtp, 'pollsess');
    owner = customer.owner;
    vps = await provisionService(customer.staff.elevated, { projectId: customer.projectId });
  });
  afterAll(async () => {
    await app.close();
  });

  /** A second session of the owner, to end without ending the one the tests set up with. */
  async function secondSession() {
    const session = await logIn(app, smtp, owner.email, 'correct horse battery staple');
    return { token: session.token, id: session.session_id };
  }

  it('a live session polls; once it is signed out, every poll is the 401 of any other route', async () => {
    const { token, id } = await secondSession();
    const own = poll(vps.serviceInstanceId, vps.operationId);
    const live = await answer(app, own, token);
    expect(live.status).toBe(200);
    expect(live.body).toMatchObject({ id: vps.operationId, status: 'succeeded' });

    await owner.api.meSessionDelete({ path: { session_id: id } });
    const elsewhere = await answer(app, '/me', token);
    expect(elsewhere).toMatchObject({
      status: 401,
      authenticate: 'Bearer',
      body: { code: 'unauthenticated' },
    });
    // The service and operation it may read, an operation it does not know, a service nobody has:
    // the same answer, so an ended session learns nothing of what exists.
    for (const path of [
      own,
      poll(vps.serviceInstanceId, randomUUID()),
      poll(randomUUID(), vps.operationId),
      poll(randomUUID(), randomUUID()),
    ]) {
      expect(await answer(app, path, token)).toEqual(elsewhere);
    }
    // The owner's other session was not touched.
    expect(
      (
        await owner.api.serviceOperationGet({
          path: { id: vps.serviceInstanceId, operation_id: vps.operationId },
        })
      ).id,
    ).toBe(vps.operationId);
  });

  it('a session past its idle lifetime, or revoked under it, is refused at once', async () => {
    const idle = await secondSession();
    const revoked = await secondSession();
    const own = poll(vps.serviceInstanceId, vps.operationId);
    expect((await answer(app, own, idle.token)).status).toBe(200);
    expect((await answer(app, own, revoked.token)).status).toBe(200);
    await app.sql`update sessions set idle_expires_at = '2000-01-01' where id = ${idle.id}`;
    await app.sql`update sessions set revoked_at = now() where id = ${revoked.id}`;
    for (const token of [idle.token, revoked.token]) {
      expect(await answer(app, own, token)).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
    }
  });

  it("the poll's statement itself settles the check: live, ended, and ended on an unknown service", async () => {
    // Straight at the store, so bind.ts's backstop cannot stand in for a statement that ignored the check.
    const { id } = await secondSession();
    const read = (check: DeferredSessionCheck, serviceId = vps.serviceInstanceId) =>
      findServiceAccess(app.sql, { serviceId }, owner.userId, {
        operationId: vps.operationId,
        session: check,
      });
    const live = new DeferredSessionCheck(id, owner.userId, app.clock.now());
    expect((await read(live))?.operation?.id).toBe(vps.operationId);
    expect(live.pending).toBe(false);
    // Another user's id with this session: not live for them.
    const stranger = new DeferredSessionCheck(id, randomUUID(), app.clock.now());
    await expect(read(stranger)).rejects.toMatchObject({ status: 401 });
    await owner.api.meSessionDelete({ path: { session_id: id } });
    for (const serviceId of [vps.serviceInstanceId, randomUUID()]) {
      const ended = new DeferredSessionCheck(id, owner.userId, app.clock.now());
      await expect(read(ended, serviceId)).rejects.toMatchObject({ status: 401 });
      expect(ended.pending).toBe(false);
    }
  });

  it("a stranger's live session still gets the 404 of an unknown service, not a 401", async () => {
    const stranger = await signedIn(app, smtp, 'pollsess-stranger');
    const refused = await answer(app, poll(vps.serviceInstanceId, vps.operationId), stranger.token);
    expect(refused).toMatchObject({
      status: 404,
      body: { code: 'not-found', detail: 'No such service instance.' },
    });
  });
});

describe("bind.ts's backstop: a folded route whose handler does not settle the check", () => {
  let app: TestApp;
  let calls = 0;
  const spec = structuredClone(bundledSpec) as { paths: Record<string, unknown> };
  const route = (operationId: string) => ({
    get: {
      operationId,
      'x-callers': ['session'],
      'x-capability': null,
      summary: 'Test-only route that folds the session check',
      responses: {
        '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } },
        '401': { $ref: '#/components/responses/Unauthorized' },
        '404': { $ref: '#/components/responses/NotFound' },
      },
    },
  });
  spec.paths['/test/fold/answer'] = route('testFoldAnswer');
  spec.paths['/test/fold/missing'] = route('testFoldMissing');
  const operations = Object.fromEntries(
    buildOperationIndex(spec).map((o) => [
      o.operationId,
      { ...o, foldsSessionCheck: o.operationId.startsWith('testFold') },
    ]),
  );
  const testHandlers = {
    ...handlers,
    testFoldAnswer: async () => {
      calls += 1;
      return { status: 200, body: { ok: true } };
    },
    testFoldMissing: async () => {
      calls += 1;
      throw notFound('No such thing.');
    },
  } as unknown as Handlers;

  beforeAll(async () => {
    app = await startTestApp({
      env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' },
      handlers: testHandlers,
      contract: { spec, operations },
    });
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers a live session, and gives an ended one the 401 in place of the answer or the 404', async () => {
    const caller = await signedIn(app, smtp, 'fold-backstop');
    expect(await answer(app, '/test/fold/answer', caller.token)).toMatchObject({
      status: 200,
      body: { ok: true },
    });
    expect(await answer(app, '/test/fold/missing', caller.token)).toMatchObject({
      status: 404,
      body: { detail: 'No such thing.' },
    });
    await app.sql`update sessions set revoked_at = now() where user_id = ${caller.userId}`;
    const before = calls;
    const ended = await answer(app, '/me', caller.token);
    expect(await answer(app, '/test/fold/answer', caller.token)).toEqual(ended);
    expect(await answer(app, '/test/fold/missing', caller.token)).toEqual(ended);
    // The handlers ran (the check was theirs to fold), and what they answered was withheld.
    expect(calls).toBe(before + 2);
  });

  it('refuses to bind an operation that writes with the check folded', () => {
    const post = { ...operations.testFoldAnswer!, method: 'post' };
    expect(() => bindOperations(testHandlers, {} as Deps, '/api/v2', { testFoldAnswer: post })).toThrow(
      /only a GET may check the session in its own statement/,
    );
  });
});
