// GET /organizations/{id}/audit (seed document 1, "Audit entry", "Audit and domains", "Limits"):
// entries of audit_entries only, most recent first, exact action filter, project and service-instance
// filters that only narrow, 1-indexed pages with the total of the same snapshot, Owners and Admins
// only (403 for other members), and a non-member's 404 byte for byte that of an unknown id.
import { randomUUID } from 'node:crypto';
import { createClient, type components, type SvcClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAudit, recordPlatformEvent, type AuditInput } from '../../server/src/audit/record.js';
import type { RequestContext } from '../../server/src/http/handler.js';
import { startTestApp, TestClock, type TestApp } from '../support/app.js';
import { newAccount } from '../support/auth.js';
import { outcome } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

type AuditEntry = components['schemas']['AuditEntry'];
type Role = components['schemas']['MemberRole'];

let app: TestApp;
let smtp: TestSmtp;
const clock = new TestClock(new Date('2026-11-21T12:00:00.000Z'));

interface Person {
  api: SvcClient;
  token: string;
  userId: string;
}
let owner: Person;
let admin: Person;
let billing: Person;
let member: Person;
let outsider: Person;

async function person(tag: string): Promise<Person> {
  const { session } = await newAccount(app, smtp, tag);
  return {
    api: createClient({ baseUrl: app.baseUrl, token: session.token, retries: 0 }),
    token: session.token,
    userId: session.user.id,
  };
}

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ clock, env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  [owner, admin, billing, member, outsider] = await Promise.all([
    person('audit-owner'),
    person('audit-admin'),
    person('audit-billing'),
    person('audit-member'),
    person('audit-outsider'),
  ]);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

/** An organization (not personal) with its members, made in SQL: the audit list only reads. */
async function organization(members: [Person, Role][]): Promise<string> {
  const id = randomUUID();
  const now = clock.now();
  await app.sql`
    insert into organizations (id, name, slug, created_at, updated_at)
    values (${id}, 'Audited', ${`audited-${id.slice(0, 8)}`}, ${now}, ${now})`;
  for (const [p, role] of members) {
    await app.sql`
      insert into organization_members (organization_id, user_id, role, created_at)
      values (${id}, ${p.userId}, ${role}, ${now})`;
  }
  return id;
}

/** Records an entry as a write would, `minutes` after the test clock's start. */
async function record(
  organizationId: string,
  minutes: number,
  entry: Partial<AuditInput> & { action: string },
): Promise<void> {
  const at = new TestClock(new Date(Date.parse('2026-11-21T12:00:00.000Z') + minutes * 60_000));
  const ctx = { requestId: `req-${minutes}`, clock: at } as unknown as RequestContext;
  await recordAudit(
    app.sql,
    ctx,
    { userId: owner.userId },
    {
      organizationId,
      target: { type: 'project', id: null },
      ...entry,
    },
  );
}

type Query = NonNullable<Parameters<SvcClient['organizationAuditList']>[0]['query']>;
const list = (who: Person, id: string, query: Query = {}) =>
  who.api.organizationAuditList({ path: { id }, query });
const actions = (entries: AuditEntry[]) => entries.map((e) => e.action);

describe('GET /organizations/{id}/audit', () => {
  it('answers the entries of audit_entries, most recent first, mapped field by field', async () => {
    const org = await organization([[owner, 'owner']]);
    const project = randomUUID();
    await record(org, 1, { action: 'organization.created', target: { type: 'organization', id: org } });
    await record(org, 3, {
      action: 'project.created',
      target: { type: 'project', id: project },
      projectId: project,
    });
    await record(org, 2, { action: 'organization.updated', target: { type: 'organization', id: org } });

    const page = await list(owner, org);
    expect(actions(page.data)).toEqual(['project.created', 'organization.updated', 'organization.created']);
    expect(page.meta).toEqual({ page: 1, page_size: 20, total_items: 3, total_pages: 1 });
    expect(page.data[0]).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      action: 'project.created',
      actor: { user_id: owner.userId, token_id: null, application_id: null, acting_as_user_id: null },
      target: { type: 'project', id: project },
      project_id: project,
      service_instance_id: null,
      request_id: 'req-3',
      created_at: '2026-11-21T12:03:00.000Z',
    });
  });

  it('orders entries of the same instant most recently written first, so pages never overlap', async () => {
    const org = await organization([[owner, 'owner']]);
    for (let i = 0; i < 7; i += 1) await record(org, 5, { action: 'member.added' });
    const all = await list(owner, org, { page_size: 100 });
    const ids = all.data.map((e) => e.id);
    const written = await app.sql<{ id: string }[]>`
      select id from audit_entries where organization_id = ${org} order by seq desc`;
    expect(ids).toEqual(written.map((r) => r.id));
    const paged: string[] = [];
    for (let page = 1; page <= 3; page += 1)
      paged.push(...(await list(owner, org, { page, page_size: 3 })).data.map((e) => e.id));
    expect(paged).toEqual(ids);
  });

  it('never shows platform-internal events, nor another organization’s entries', async () => {
    const org = await organization([[owner, 'owner']]);
    const other = await organization([[owner, 'owner']]);
    await record(org, 1, { action: 'member.added' });
    await record(other, 2, { action: 'member.added' });
    const ctx = { requestId: 'req-internal', clock } as unknown as RequestContext;
    await recordPlatformEvent(app.sql, ctx, {
      organizationId: org,
      action: 'wallet.reconciled',
      target: { type: 'organization', id: org },
    });
    const page = await list(owner, org);
    expect(actions(page.data)).toEqual(['member.added']);
    expect(page.meta.total_items).toBe(1);
    expect(await list(owner, org, { action: 'wallet.reconciled' })).toMatchObject({
      data: [],
      meta: { total_items: 0 },
    });
  });

  it('filters by action exactly, and project_id and service_instance_id only narrow', async () => {
    const org = await organization([[owner, 'owner']]);
    const [p1, p2, s1] = [randomUUID(), randomUUID(), randomUUID()];
    await record(org, 1, { action: 'project.created', projectId: p1 });
    await record(org, 2, { action: 'project.created', projectId: p2 });
    await record(org, 3, { action: 'subscription.activated', projectId: p1, serviceInstanceId: s1 });
    await record(org, 4, { action: 'organization.updated' });

    expect(actions((await list(owner, org, { action: 'project.created' })).data)).toEqual([
      'project.created',
      'project.created',
    ]);
    // Exact: neither a prefix nor a longer name matches.
    expect((await list(owner, org, { action: 'project.create' })).meta.total_items).toBe(0);
    expect((await list(owner, org, { action: 'project.created_' })).meta.total_items).toBe(0);
    // What no action can be (`<area>.<event>`, lowercase) is refused by the contract.
    for (const action of ['project', 'Project.created', 'project.%', 'x'.repeat(101)]) {
      expect(await outcome(list(owner, org, { action }))).toEqual([400, 'invalid-request']);
    }

    const byProject = await list(owner, org, { project_id: p1 });
    expect(byProject.data.map((e) => [e.action, e.project_id])).toEqual([
      ['subscription.activated', p1],
      ['project.created', p1],
    ]);
    expect(byProject.meta.total_items).toBe(2);
    expect(
      (await list(owner, org, { service_instance_id: s1 })).data.map((e) => e.service_instance_id),
    ).toEqual([s1]);
    // Filters combine (and): each narrows what the others left.
    expect((await list(owner, org, { project_id: p1, action: 'project.created' })).meta.total_items).toBe(1);
    expect((await list(owner, org, { project_id: p2, service_instance_id: s1 })).meta.total_items).toBe(0);
    expect((await list(owner, org, { project_id: randomUUID() })).data).toEqual([]);
  });

  it('shows what the organization, member and project routes wrote, with their request ids', async () => {
    // The app's clock stands still unless moved: a second between writes orders them as written.
    const tick = <T>(result: T) => (clock.advance(1000), result);
    const org = tick(
      await owner.api.organizationCreate({
        body: { name: 'Real writes', slug: `real-${randomUUID().slice(0, 8)}` },
      }),
    );
    tick(await owner.api.organizationUpdate({ path: { id: org.id }, body: { name: 'Renamed' } }));
    tick(
      await owner.api.memberAdd({ path: { id: org.id }, body: { user_id: admin.userId, role: 'member' } }),
    );
    tick(
      await owner.api.memberUpdate({ path: { id: org.id, user_id: admin.userId }, body: { role: 'admin' } }),
    );
    const project = tick(
      await owner.api.projectCreate({ path: { id: org.id }, body: { name: 'Site', slug: 'site' } }),
    );
    tick(await owner.api.projectUpdate({ path: { id: project.id }, body: { description: 'the web site' } }));
    tick(await owner.api.projectDelete({ path: { id: project.id } }));
    // A refused write records nothing: the entry lives in the write's own transaction.
    expect(
      await outcome(owner.api.projectCreate({ path: { id: org.id }, body: { name: 'Bad', slug: '-' } })),
    ).toEqual([400, 'invalid-request']);

    // The new admin reads it now; every entry names its actor and the request that wrote it.
    const page = await list(admin, org.id);
    expect(actions(page.data)).toEqual([
      'project.deleted',
      'project.updated',
      'project.created',
      'member.role_changed',
      'member.added',
      'organization.updated',
      'organization.created',
    ]);
    expect(page.data.every((e) => e.actor.user_id === owner.userId && typeof e.request_id === 'string')).toBe(
      true,
    );
    expect(new Set(page.data.map((e) => e.request_id)).size).toBe(7);
    expect(page.data[0]).toMatchObject({
      target: { type: 'project', id: project.id },
      project_id: project.id,
    });
    expect(page.data.at(-1)).toMatchObject({
      target: { type: 'organization', id: org.id },
      project_id: null,
    });
    expect(actions((await list(admin, org.id, { project_id: project.id })).data)).toEqual([
      'project.deleted',
      'project.updated',
      'project.created',
    ]);
    // The entries are the organization's, not the person's: none of them shows in another one.
    const elsewhere = await organization([[owner, 'owner']]);
    expect((await list(owner, elsewhere)).meta.total_items).toBe(0);
  });

  describe('pages', () => {
    let org: string;
    beforeAll(async () => {
      org = await organization([[owner, 'owner']]);
      for (let i = 1; i <= 23; i += 1)
        await record(org, i, { action: 'member.added', target: { type: 'member', id: String(i) } });
    });
    const targets = (entries: AuditEntry[]) => entries.map((e) => Number(e.target.id));

    it('are 20 entries by default, 1-indexed, and the last one is partial', async () => {
      const first = await list(owner, org);
      expect(targets(first.data)).toEqual(Array.from({ length: 20 }, (_, i) => 23 - i));
      expect(first.meta).toEqual({ page: 1, page_size: 20, total_items: 23, total_pages: 2 });
      const second = await list(owner, org, { page: 2 });
      expect(targets(second.data)).toEqual([3, 2, 1]);
      expect(second.meta).toEqual({ page: 2, page_size: 20, total_items: 23, total_pages: 2 });
    });

    it('page 0 reads as page 1', async () => {
      const zero = await list(owner, org, { page: 0, page_size: 5 });
      expect(zero).toEqual(await list(owner, org, { page: 1, page_size: 5 }));
      expect(zero.meta.page).toBe(1);
    });

    it('a page beyond the end is empty but still reports the total', async () => {
      expect(await list(owner, org, { page: 3 })).toEqual({
        data: [],
        meta: { page: 3, page_size: 20, total_items: 23, total_pages: 2 },
      });
      expect((await list(owner, org, { page: 1_000_000_000, page_size: 100 })).meta).toEqual({
        page: 1_000_000_000,
        page_size: 100,
        total_items: 23,
        total_pages: 1,
      });
    });

    it('an empty log is one empty page with no pages at all', async () => {
      const empty = await organization([[owner, 'owner']]);
      expect(await list(owner, empty)).toEqual({
        data: [],
        meta: { page: 1, page_size: 20, total_items: 0, total_pages: 0 },
      });
    });

    it('page_size goes up to 100; 0, 101, a negative or fractional page are refused by the contract', async () => {
      expect((await list(owner, org, { page_size: 100 })).data).toHaveLength(23);
      expect((await list(owner, org, { page_size: 1, page: 23 })).data.map((e) => e.target.id)).toEqual([
        '1',
      ]);
      for (const query of [{ page_size: 101 }, { page_size: 0 }, { page: -1 }, { page: 1.5 }] as Query[]) {
        expect(await outcome(list(owner, org, query))).toEqual([400, 'invalid-request']);
      }
      const raw = await fetch(`${app.baseUrl}/api/v2/organizations/${org}/audit?page_size=abc`, {
        headers: { authorization: `Bearer ${owner.token}` },
      });
      expect(raw.status).toBe(400);
      const unknown = await fetch(`${app.baseUrl}/api/v2/organizations/${org}/audit?actor=x`, {
        headers: { authorization: `Bearer ${owner.token}` },
      });
      expect(unknown.status).toBe(400);
    });
  });

  describe('who may read it', () => {
    let org: string;
    beforeAll(async () => {
      org = await organization([
        [owner, 'owner'],
        [admin, 'admin'],
        [billing, 'billing'],
        [member, 'member'],
      ]);
      await record(org, 1, { action: 'member.added' });
    });

    it('Owners and Admins read the same log', async () => {
      const asOwner = await list(owner, org);
      expect(asOwner.meta.total_items).toBe(1);
      expect(await list(admin, org)).toEqual(asOwner);
    });

    it.each([
      ['billing', () => billing],
      ['member', () => member],
    ])('a %s member is refused with 403 forbidden', async (_role, who) => {
      expect(await outcome(list(who(), org))).toEqual([403, 'forbidden']);
    });

    it('a non-member gets the 404 of an unknown id, byte for byte', async () => {
      const get = (id: string) =>
        fetch(`${app.baseUrl}/api/v2/organizations/${id}/audit?page=2`, {
          headers: { authorization: `Bearer ${outsider.token}`, 'x-request-id': 'same-request-id' },
        });
      const [hidden, unknown] = await Promise.all([get(org), get(randomUUID())]);
      expect(hidden.status).toBe(404);
      expect(unknown.status).toBe(404);
      const headersOf = (r: Response) => [r.headers.get('content-type'), r.headers.get('x-request-id')];
      expect(headersOf(hidden)).toEqual(headersOf(unknown));
      const [a, b] = [Buffer.from(await hidden.arrayBuffer()), Buffer.from(await unknown.arrayBuffer())];
      expect(a.equals(b)).toBe(true);
      expect(JSON.parse(a.toString('utf8'))).toMatchObject({ status: 404, code: 'not-found' });
    });

    it('a malformed id is refused by the contract, and no session is 401', async () => {
      expect(await outcome(list(owner, 'not-a-uuid'))).toEqual([400, 'invalid-request']);
      const anonymous = createClient({ baseUrl: app.baseUrl, retries: 0 });
      expect(await outcome(anonymous.organizationAuditList({ path: { id: org } }))).toEqual([
        401,
        'unauthenticated',
      ]);
    });

    it('a member removed meanwhile reads nothing any more (404)', async () => {
      const gone = await organization([
        [owner, 'owner'],
        [admin, 'admin'],
      ]);
      expect((await list(admin, gone)).meta.total_items).toBe(0);
      await app.sql`delete from organization_members where organization_id = ${gone} and user_id = ${admin.userId}`;
      expect(await outcome(list(admin, gone))).toEqual([404, 'not-found']);
    });
  });
});
