// Safe retries of every create and every operation start (DECISIONS.md §4, §6): the SDK sends an
// Idempotency-Key of its own on each such POST and retries it after a lost connection; the server
// answers the repeat with the first answer. A connection cut after the server committed yields one
// thing made, not two.
import { createClient, operations, SvcNetworkError, type SvcClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { signedIn, type Caller } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { awaitOperation, PRODUCTS } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let owner: Caller;
let staff: Staff;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  owner = await signedIn(app, smtp, 'idem-owner');
  staff = await staffMember(app, smtp, 'idem-staff', ['manage_services']);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

interface Seen {
  method: string;
  path: string;
  key: string | null;
}

/**
 * An SDK client whose connection breaks after the server answered the first POST: the server
 * committed, the client saw a network error (what a proxy reset or a client timeout looks like).
 */
function cuttingClient(token: string, seen: Seen[]): SvcClient {
  let cut = false;
  return createClient({
    baseUrl: app.baseUrl,
    token,
    retries: 2,
    fetch: async (request) => {
      seen.push({ method: request.method, path: new URL(request.url).pathname, key: request.headers.get('idempotency-key') });
      const response = await fetch(request);
      if (request.method === 'POST' && !cut) {
        cut = true;
        await response.arrayBuffer();
        throw new TypeError('fetch failed: the connection was reset');
      }
      return response;
    },
  });
}

const slug = (tag: string) => `${tag}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;

describe('a connection cut after the server committed', () => {
  it('organization create: the SDK retries with its own key and one organization is made', async () => {
    const seen: Seen[] = [];
    const s = slug('cut');
    const org = await cuttingClient(owner.token, seen).organizationCreate({ body: { name: 'Cut once', slug: s } });
    expect(seen.length).toBe(2);
    expect(seen[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[1]!.key).toBe(seen[0]!.key);
    const rows = await app.sql<{ id: string }[]>`select id from organizations where slug = ${s}`;
    expect(rows.map((r) => r.id)).toEqual([org.id]);
  });

  it('an operation start (POST /admin/subscriptions): one subscription and one operation, not two', async () => {
    const orgId = (await owner.api.organizationCreate({ body: { name: 'Idem hosting', slug: slug('idem') } })).id;
    const projectId = (await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Prod', slug: 'prod' } })).id;
    const seen: Seen[] = [];
    const created = await cuttingClient(staff.elevatedToken, seen).adminSubscriptionCreate({
      body: { project_id: projectId, product_id: PRODUCTS['vps-small'], name: 'Cut server' },
    });
    expect(seen.filter((s) => s.method === 'POST').length).toBe(2);
    const subscriptions = await app.sql<{ id: string }[]>`select id from subscriptions where project_id = ${projectId}`;
    expect(subscriptions.map((r) => r.id)).toEqual([created.subscription_id]);
    const ops = await app.sql<{ id: string }[]>`
      select id from service_operations where service_instance_id = ${created.service_instance_id}`;
    expect(ops.map((r) => r.id)).toEqual([created.operation_id]);
    await awaitOperation(staff.elevated, created.service_instance_id, created.operation_id);
  }, 120_000);

  it('a new API token: the repeat answers the same token, and the stored answer does not hold it in the clear', async () => {
    const seen: Seen[] = [];
    const name = `cut-${Date.now()}`;
    const created = await cuttingClient(owner.token, seen).meApiTokenCreate({
      body: { name, authorization: { grants: [{ capability: 'organizations.read', scope: { kind: 'all' } }] } },
    });
    expect(seen.length).toBe(2);
    const tokens = await app.sql<{ id: string }[]>`select id from api_tokens where user_id = ${owner.userId} and name = ${name}`;
    expect(tokens.map((r) => r.id)).toEqual([created.token.id]);
    expect(created.secret).toMatch(/^svc_pat_/);
    const stored = await app.sql<{ body: string }[]>`select body::text as body from idempotency_keys where key = ${seen[0]!.key}`;
    expect(stored.length).toBe(1);
    expect(stored[0]!.body).not.toContain(created.secret.slice(-20));
  });
});

describe('Idempotency-Key on every create', () => {
  const creates = Object.values(operations).filter(
    (op) => op.method === 'post' && op.successStatus === 201,
  );

  it('every POST that answers 201 Created declares the header, by the one shared parameter', () => {
    expect(creates.length).toBeGreaterThan(5);
    const descriptions = new Set<string>();
    for (const op of creates) {
      const p = op.parameters.find((x) => x.in === 'header' && x.name === 'Idempotency-Key');
      expect(p, op.operationId).toBeDefined();
      descriptions.add(p!.description ?? '');
    }
    expect(descriptions.size).toBe(1);
  });

  it('the same key again answers the first answer; with another body it is 422 and nothing changes', async () => {
    const key = `k-${Date.now()}`;
    const s = slug('again');
    const first = await owner.api.organizationCreate({ body: { name: 'Again', slug: s }, header: { 'Idempotency-Key': key } });
    const second = await owner.api.organizationCreate({ body: { name: 'Again', slug: s }, header: { 'Idempotency-Key': key } });
    expect(second).toEqual(first);
    const before = await app.sql`select count(*)::int as n from organizations`;
    expect(
      await outcome(owner.api.organizationCreate({ body: { name: 'Other', slug: slug('other') }, header: { 'Idempotency-Key': key } })),
    ).toEqual([422, 'idempotency-key-reused']);
    expect(await app.sql`select count(*)::int as n from organizations`).toEqual(before);
  });

  it('a refused create leaves the key free for the corrected request', async () => {
    const key = `k-refused-${Date.now()}`;
    const taken = slug('taken');
    await owner.api.organizationCreate({ body: { name: 'Taken', slug: taken } });
    expect(
      await outcome(owner.api.organizationCreate({ body: { name: 'Taken', slug: taken }, header: { 'Idempotency-Key': key } })),
    ).toEqual([409, 'slug-taken']);
    const s = slug('fixed');
    const made = await owner.api.organizationCreate({ body: { name: 'Fixed', slug: s }, header: { 'Idempotency-Key': key } });
    expect(made.slug).toBe(s);
  });

  it('a member added twice with one key: one membership, one answer', async () => {
    const other = await signedIn(app, smtp, 'idem-member');
    const orgId = (await owner.api.organizationCreate({ body: { name: 'Members', slug: slug('members') } })).id;
    const key = `k-member-${Date.now()}`;
    const body = { user_id: other.userId, role: 'member' } as never;
    const [a, b] = await Promise.all([
      owner.api.memberAdd({ path: { id: orgId }, body, header: { 'Idempotency-Key': key } }),
      owner.api.memberAdd({ path: { id: orgId }, body, header: { 'Idempotency-Key': key } }),
    ]);
    expect(b).toEqual(a);
    const rows = await app.sql`select 1 from organization_members where organization_id = ${orgId} and user_id = ${other.userId}`;
    expect(rows.length).toBe(1);
  });

  it('a POST that takes no key is never retried by the SDK', async () => {
    let attempts = 0;
    const client = createClient({
      baseUrl: app.baseUrl,
      token: owner.token,
      retries: 2,
      fetch: async () => {
        attempts += 1;
        throw new TypeError('fetch failed');
      },
    });
    const err = await client.meDiscoveryMark({ body: { keys: ['x'] } as never }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcNetworkError);
    expect(attempts).toBe(1);
  });
});
