// Organizations (seed document 1, "Organization", "Organizations", "Authentication": anti-enumeration):
// the personal organization, create, list, get, by-slug, rename, delete and the billing country, each
// refusal with a read-back that nothing changed and each write with its audit entry.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import {
  auditCount,
  auditEntries,
  auditOf,
  raw,
  signedIn as signIn,
  type Caller,
} from '../support/organizations.js';
import { outcome, refusal } from '../support/refusal.js';
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

const signedIn = (tag: string) => signIn(app, smtp, tag);
let n = 0;
const slug = (tag = 'org') => `${tag}-${Date.now().toString(36)}-${(n += 1)}`;

const orgRow = async (id: string) => {
  const [r] = await app.sql`
    select id, name, slug, personal_owner_id, billing_country_code, icon_asset_id, created_at, updated_at
    from organizations where id = ${id}`;
  return r;
};
const orgCount = async () => {
  const [r] = await app.sql<{ n: number }[]>`select count(*)::int as n from organizations`;
  return r!.n;
};

async function withMember(owner: Caller, organizationId: string, role: 'admin' | 'billing' | 'member' | 'owner') {
  const member = await signedIn(role);
  await owner.api.memberAdd({ path: { id: organizationId }, body: { user_id: member.userId, role } });
  return member;
}

describe('the personal organization', () => {
  it('exists after signup, with its managed games project and the person as Owner', async () => {
    const me = await signedIn('personal');
    const list = await me.api.organizationList();
    expect(list).toEqual([
      {
        id: me.personalOrganizationId,
        name: 'Test Person',
        slug: expect.stringMatching(/^test-person-[0-9a-f]{8}$/),
        created_at: expect.stringMatching(/Z$/),
        billing_country_code: null,
        icon_asset_id: null,
        role: 'owner',
        personal: true,
      },
    ]);
    const members = await app.sql`
      select user_id, role from organization_members where organization_id = ${me.personalOrganizationId}`;
    expect(members).toEqual([{ user_id: me.userId, role: 'owner' }]);
    const projects = await app.sql`
      select slug, managed from projects where organization_id = ${me.personalOrganizationId}`;
    expect(projects).toEqual([{ slug: 'games', managed: true }]);
  });
});

describe('POST /organizations', () => {
  it('creates an organization with the caller as Owner, audited', async () => {
    const me = await signedIn('create');
    const s = slug('acme');
    const org = await me.api.organizationCreate({ body: { name: '  Acme Hosting ', slug: s } });
    const requestId = me.lastRequestId();
    expect(org).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Acme Hosting',
      slug: s,
      created_at: '2026-11-21T12:00:00.000Z',
      billing_country_code: null,
      icon_asset_id: null,
      role: 'owner',
      personal: false,
    });
    expect(await me.api.organizationGet({ path: { id: org.id } })).toEqual(org);
    expect(await app.sql`select user_id, role from organization_members where organization_id = ${org.id}`).toEqual([
      { user_id: me.userId, role: 'owner' },
    ]);
    const audit = await auditEntries(app, org.id);
    expect(audit).toEqual([
      {
        action: 'organization.created',
        actor_user_id: me.userId,
        target_type: 'organization',
        target_id: org.id,
        request_id: requestId,
      },
    ]);
  });

  it.each([
    ['uppercase', 'Acme'],
    ['one character', 'a'],
    ['a leading hyphen', '-acme'],
    ['a trailing hyphen', 'acme-'],
    ['a double hyphen', 'ac--me'],
    ['an underscore', 'ac_me'],
    ['non-ASCII', 'acmé'],
    ['too long', 'a'.repeat(49)],
  ])('refuses a slug with %s (400), creating nothing', async (_why, bad) => {
    const me = await signedIn('badslug');
    const before = await orgCount();
    expect(await outcome(me.api.organizationCreate({ body: { name: 'Acme', slug: bad } }))).toEqual([400, 'invalid-request']);
    expect(await orgCount()).toBe(before);
  });

  it('refuses a name that is blank after trimming or holds control characters, and unknown fields', async () => {
    const me = await signedIn('badname');
    const before = await orgCount();
    for (const name of ['   ', 'Ac\u0007me']) {
      const err = await refusal(me.api.organizationCreate({ body: { name, slug: slug() } }));
      expect([err.status, err.code, err.errors[0]?.pointer]).toEqual([400, 'invalid-field-value', '/name']);
    }
    expect(await outcome(me.api.organizationCreate({ body: { name: 'x'.repeat(101), slug: slug() } }))).toEqual([
      400,
      'invalid-request',
    ]);
    expect(
      await outcome(me.api.organizationCreate({ body: { name: 'Acme', slug: slug(), personal: true } as never })),
    ).toEqual([400, 'invalid-request']);
    expect(await orgCount()).toBe(before);
  });

  it('refuses a taken slug with 409 slug-taken, a personal organization\'s too, creating nothing', async () => {
    const a = await signedIn('taken-a');
    const b = await signedIn('taken-b');
    const s = slug('taken');
    await a.api.organizationCreate({ body: { name: 'First', slug: s } });
    const personalSlug = (await a.api.organizationGet({ path: { id: a.personalOrganizationId } })).slug;
    const before = await orgCount();
    for (const taken of [s, personalSlug]) {
      const err = await refusal(b.api.organizationCreate({ body: { name: 'Second', slug: taken } }));
      expect([err.status, err.code]).toEqual([409, 'slug-taken']);
    }
    expect(await orgCount()).toBe(before);
    expect(await b.api.organizationList()).toHaveLength(1);
    expect(await app.sql`select 1 from audit_entries where actor_user_id = ${b.userId}`).toHaveLength(0);
  });
});

describe('GET /organizations', () => {
  it('lists the caller\'s organizations: personal first, then by name, each with the caller\'s role', async () => {
    const me = await signedIn('list');
    const other = await signedIn('list-other');
    const beta = await me.api.organizationCreate({ body: { name: 'beta', slug: slug() } });
    const alpha = await other.api.organizationCreate({ body: { name: 'Alpha', slug: slug() } });
    await other.api.memberAdd({ path: { id: alpha.id }, body: { user_id: me.userId, role: 'billing' } });
    const gamma = await me.api.organizationCreate({ body: { name: 'Gamma', slug: slug() } });
    const list = await me.api.organizationList();
    expect(list.map((o) => [o.id, o.role, o.personal])).toEqual([
      [me.personalOrganizationId, 'owner', true],
      [alpha.id, 'billing', false],
      [beta.id, 'owner', false],
      [gamma.id, 'owner', false],
    ]);
    // Someone else's organizations never appear.
    expect((await other.api.organizationList()).map((o) => o.id)).not.toContain(beta.id);
  });
});

describe('GET /organizations/{id} and /organizations/by-slug/{slug}', () => {
  it('answers members with their own role; a non-member gets the 404 of an unknown id', async () => {
    const owner = await signedIn('get');
    const org = await owner.api.organizationCreate({ body: { name: 'Readable', slug: slug() } });
    const member = await withMember(owner, org.id, 'member');
    expect(await member.api.organizationGet({ path: { id: org.id } })).toEqual({ ...org, role: 'member' });
    expect(await member.api.organizationGetBySlug({ path: { slug: org.slug } })).toEqual({ ...org, role: 'member' });
    const stranger = await signedIn('stranger');
    expect(await outcome(stranger.api.organizationGet({ path: { id: org.id } }))).toEqual([404, 'not-found']);
    expect(await outcome(stranger.api.organizationGetBySlug({ path: { slug: org.slug } }))).toEqual([404, 'not-found']);
    const hidden = await raw(app, stranger.token, 'GET', `/organizations/by-slug/${org.slug}`);
    const absent = await raw(app, stranger.token, 'GET', `/organizations/by-slug/${slug('nobody')}`);
    expect(hidden).toEqual(absent);
  });

  it('resolves /organizations/by-slug/members to the organization whose slug is "members"', async () => {
    const me = await signedIn('routing');
    const org = await me.api.organizationCreate({ body: { name: 'Members Inc', slug: 'members' } });
    expect(await me.api.organizationGetBySlug({ path: { slug: 'members' } })).toEqual(org);
    const res = await raw(app, me.token, 'GET', '/organizations/by-slug/members');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual(org);
    // And /organizations/{id}/members still lists members.
    expect((await me.api.memberList({ path: { id: org.id } })).map((m) => m.user_id)).toEqual([me.userId]);
  });
});

describe('PATCH /organizations/{id}', () => {
  it('renames and re-slugs for Owners and Admins; null or omitted fields stay; audited', async () => {
    const owner = await signedIn('patch');
    const org = await owner.api.organizationCreate({ body: { name: 'Old Name', slug: slug() } });
    const newSlug = slug('renamed');
    const a = await owner.api.organizationUpdate({ path: { id: org.id }, body: { name: 'New Name', slug: null } });
    expect(a).toEqual({ ...org, name: 'New Name' });
    expect(await auditOf(app, owner.lastRequestId())).toEqual({
      organization_id: org.id,
      action: 'organization.updated',
      actor_user_id: owner.userId,
      target_type: 'organization',
      target_id: org.id,
      request_id: owner.lastRequestId(),
    });
    const admin = await withMember(owner, org.id, 'admin');
    // An omitted field stays as a null one does.
    const patched = await raw(app, admin.token, 'PATCH', `/organizations/${org.id}`, { slug: newSlug }, 'patch-by-admin');
    const b = JSON.parse(patched.text) as typeof org;
    expect([patched.status, b]).toEqual([200, { ...org, name: 'New Name', slug: newSlug, role: 'admin' }]);
    expect(await auditOf(app, 'patch-by-admin')).toMatchObject({ action: 'organization.updated', actor_user_id: admin.userId });
    // Nothing given, or the values it has: no change and no audit entry.
    const count = await auditCount(app, org.id);
    const empty = await raw(app, owner.token, 'PATCH', `/organizations/${org.id}`, {});
    expect([empty.status, JSON.parse(empty.text)]).toEqual([200, { ...b, role: 'owner' }]);
    expect(await owner.api.organizationUpdate({ path: { id: org.id }, body: { name: null, slug: null } })).toEqual({
      ...b,
      role: 'owner',
    });
    expect(await owner.api.organizationUpdate({ path: { id: org.id }, body: { name: 'New Name', slug: newSlug } })).toEqual({
      ...b,
      role: 'owner',
    });
    expect(await auditCount(app, org.id)).toBe(count);
    expect(await owner.api.organizationGetBySlug({ path: { slug: newSlug } })).toMatchObject({ id: org.id });
  });

  it('refuses Billing and plain members (403), changing nothing', async () => {
    const owner = await signedIn('patch-403');
    const org = await owner.api.organizationCreate({ body: { name: 'Fixed', slug: slug() } });
    for (const role of ['billing', 'member'] as const) {
      const m = await withMember(owner, org.id, role);
      const before = await orgRow(org.id);
      const count = await auditCount(app, org.id);
      expect(await outcome(m.api.organizationUpdate({ path: { id: org.id }, body: { name: 'Hacked', slug: null } }))).toEqual([
        403,
        'forbidden',
      ]);
      expect(await orgRow(org.id)).toEqual(before);
      expect(await auditCount(app, org.id)).toBe(count);
    }
  });

  it('refuses a taken slug (409 slug-taken), changing nothing', async () => {
    const owner = await signedIn('patch-409');
    const first = await owner.api.organizationCreate({ body: { name: 'First', slug: slug() } });
    const second = await owner.api.organizationCreate({ body: { name: 'Second', slug: slug() } });
    const before = await orgRow(second.id);
    const count = await auditCount(app, second.id);
    const err = await refusal(
      owner.api.organizationUpdate({ path: { id: second.id }, body: { name: 'Renamed', slug: first.slug } }),
    );
    expect([err.status, err.code]).toEqual([409, 'slug-taken']);
    expect(await orgRow(second.id)).toEqual(before);
    expect(await auditCount(app, second.id)).toBe(count);
  });

  it('keeps a personal organization\'s name and slug (422 organization-personal)', async () => {
    const me = await signedIn('patch-personal');
    const id = me.personalOrganizationId;
    const before = await orgRow(id);
    for (const body of [{ name: 'Renamed', slug: null }, { name: null, slug: slug() }, { name: 'Renamed', slug: slug() }]) {
      expect(await outcome(me.api.organizationUpdate({ path: { id }, body }))).toEqual([422, 'organization-personal']);
    }
    expect(await orgRow(id)).toEqual(before);
    expect(await auditCount(app, id)).toBe(0);
    // Nothing to change is no change.
    expect((await me.api.organizationUpdate({ path: { id }, body: { name: null, slug: null } })).name).toBe(before!.name);
  });
});

describe('DELETE /organizations/{id}', () => {
  it('deletes an empty organization for its Owner; the deletion is kept as a platform event', async () => {
    const owner = await signedIn('delete');
    const org = await owner.api.organizationCreate({ body: { name: 'Doomed', slug: slug() } });
    await withMember(owner, org.id, 'admin');
    await app.sql`
      insert into organization_wallets (organization_id, balance, reservations, floor, credit_limit, open_receivables, updated_at)
      values (${org.id}, 0, 0, 10, 0, 0, now())`;
    await owner.api.organizationDelete({ path: { id: org.id } });
    const requestId = owner.lastRequestId();
    expect(await orgRow(org.id)).toBeUndefined();
    expect(await outcome(owner.api.organizationGet({ path: { id: org.id } }))).toEqual([404, 'not-found']);
    expect(await app.sql`select 1 from organization_members where organization_id = ${org.id}`).toHaveLength(0);
    expect(await auditCount(app, org.id)).toBe(0);
    const events = await app.sql`
      select action, target_type, target_id, details, request_id from platform_events where organization_id = ${org.id}`;
    expect(events).toEqual([
      {
        action: 'organization.deleted',
        target_type: 'organization',
        target_id: org.id,
        details: { actor_user_id: owner.userId, name: 'Doomed', slug: org.slug },
        request_id: requestId,
      },
    ]);
    // The slug is free again.
    expect((await owner.api.organizationCreate({ body: { name: 'Reborn', slug: org.slug } })).slug).toBe(org.slug);
  });

  it('is for Owners only: Admins and others get 403, changing nothing', async () => {
    const owner = await signedIn('delete-403');
    const org = await owner.api.organizationCreate({ body: { name: 'Kept', slug: slug() } });
    for (const role of ['admin', 'billing', 'member'] as const) {
      const m = await withMember(owner, org.id, role);
      expect(await outcome(m.api.organizationDelete({ path: { id: org.id } }))).toEqual([403, 'forbidden']);
    }
    expect(await orgRow(org.id)).toBeDefined();
    expect(await app.sql`select 1 from platform_events where organization_id = ${org.id}`).toHaveLength(0);
  });

  it('refuses a personal organization (422 organization-personal)', async () => {
    const me = await signedIn('delete-personal');
    const before = await orgRow(me.personalOrganizationId);
    const err = await refusal(me.api.organizationDelete({ path: { id: me.personalOrganizationId } }));
    expect([err.status, err.code]).toEqual([422, 'organization-personal']);
    expect(await orgRow(me.personalOrganizationId)).toEqual(before);
    expect(await app.sql`select 1 from projects where organization_id = ${me.personalOrganizationId}`).toHaveLength(1);
  });

  it('refuses while a project exists (details projects) or the wallet holds a balance (details balance)', async () => {
    const owner = await signedIn('delete-full');
    const org = await owner.api.organizationCreate({ body: { name: 'Busy', slug: slug() } });
    const projectId = randomUUID();
    await app.sql`
      insert into projects (id, organization_id, name, slug, created_at, updated_at)
      values (${projectId}, ${org.id}, 'Web', 'web', now(), now())`;
    let err = await refusal(owner.api.organizationDelete({ path: { id: org.id } }));
    expect([err.status, err.code, err.details]).toEqual([422, 'organization-not-empty', 'projects']);
    expect(await orgRow(org.id)).toBeDefined();
    expect(await app.sql`select 1 from projects where id = ${projectId}`).toHaveLength(1);

    await app.sql`delete from projects where id = ${projectId}`;
    for (const balance of ['0.01', '-3.50']) {
      await app.sql`
        insert into organization_wallets (organization_id, balance, updated_at) values (${org.id}, ${balance}, now())
        on conflict (organization_id) do update set balance = excluded.balance`;
      err = await refusal(owner.api.organizationDelete({ path: { id: org.id } }));
      expect([err.status, err.code, err.details]).toEqual([422, 'organization-not-empty', 'balance']);
      expect(await orgRow(org.id)).toBeDefined();
    }
    expect(await app.sql`select 1 from platform_events where organization_id = ${org.id}`).toHaveLength(0);
    await app.sql`update organization_wallets set balance = 0 where organization_id = ${org.id}`;
    await owner.api.organizationDelete({ path: { id: org.id } });
    expect(await orgRow(org.id)).toBeUndefined();
  });
});

describe('PUT /organizations/{id}/billing-country', () => {
  it('is set once, case-insensitively, by Owners and Admins; the same value again changes nothing', async () => {
    const owner = await signedIn('country');
    const org = await owner.api.organizationCreate({ body: { name: 'Taxed', slug: slug() } });
    const admin = await withMember(owner, org.id, 'admin');
    const set = await admin.api.organizationBillingCountrySet({ path: { id: org.id }, body: { country_code: 'at' } });
    expect(set).toEqual({ ...org, billing_country_code: 'AT', role: 'admin' });
    expect(await auditOf(app, admin.lastRequestId())).toMatchObject({
      organization_id: org.id,
      action: 'organization.billing_country_set',
      actor_user_id: admin.userId,
      target_type: 'organization',
      target_id: org.id,
    });
    const before = await orgRow(org.id);
    const count = await auditCount(app, org.id);
    expect(await owner.api.organizationBillingCountrySet({ path: { id: org.id }, body: { country_code: 'At' } })).toEqual({
      ...set,
      role: 'owner',
    });
    expect(await orgRow(org.id)).toEqual(before);
    expect(await auditCount(app, org.id)).toBe(count);

    const err = await refusal(owner.api.organizationBillingCountrySet({ path: { id: org.id }, body: { country_code: 'DE' } }));
    expect([err.status, err.code]).toEqual([422, 'billing-country-already-set']);
    expect(await orgRow(org.id)).toEqual(before);
    expect(await auditCount(app, org.id)).toBe(count);
  });

  it('refuses a code that names no country (400 invalid-field-value) and Billing or plain members (403)', async () => {
    const owner = await signedIn('country-bad');
    const org = await owner.api.organizationCreate({ body: { name: 'Untaxed', slug: slug() } });
    for (const code of ['XX', 'EU', 'UK', 'zz']) {
      const err = await refusal(owner.api.organizationBillingCountrySet({ path: { id: org.id }, body: { country_code: code } }));
      expect([err.status, err.code, err.errors[0]?.pointer]).toEqual([400, 'invalid-field-value', '/country_code']);
    }
    expect(
      await outcome(owner.api.organizationBillingCountrySet({ path: { id: org.id }, body: { country_code: 'AUT' } })),
    ).toEqual([400, 'invalid-request']);
    for (const role of ['billing', 'member'] as const) {
      const m = await withMember(owner, org.id, role);
      expect(
        await outcome(m.api.organizationBillingCountrySet({ path: { id: org.id }, body: { country_code: 'FR' } })),
      ).toEqual([403, 'forbidden']);
    }
    expect((await orgRow(org.id))!.billing_country_code).toBeNull();
    expect((await auditEntries(app, org.id)).map((e) => e.action)).not.toContain('organization.billing_country_set');
  });
});

describe('a non-member', () => {
  it('gets a 404 byte-identical to an unknown id on every organization-scoped route', async () => {
    const owner = await signedIn('hidden');
    const org = await owner.api.organizationCreate({ body: { name: 'Hidden', slug: slug() } });
    const stranger = await signedIn('prober');
    const unknown = randomUUID();
    const userId = owner.userId;
    const routes: [string, (id: string) => string, unknown?][] = [
      ['GET', (id) => `/organizations/${id}`],
      ['PATCH', (id) => `/organizations/${id}`, { name: 'Mine now' }],
      ['DELETE', (id) => `/organizations/${id}`],
      ['PUT', (id) => `/organizations/${id}/billing-country`, { country_code: 'AT' }],
      ['PUT', (id) => `/organizations/${id}/billing-country`, { country_code: 'XX' }],
      ['DELETE', (id) => `/organizations/${id}/icon`],
      ['GET', (id) => `/organizations/${id}/standing`],
      ['GET', (id) => `/organizations/${id}/members`],
      ['POST', (id) => `/organizations/${id}/members`, { user_id: stranger.userId, role: 'owner' }],
      ['PATCH', (id) => `/organizations/${id}/members/${userId}`, { role: 'member' }],
      ['DELETE', (id) => `/organizations/${id}/members/${userId}`],
      ['DELETE', (id) => `/organizations/${id}/members/${stranger.userId}`],
    ];
    const before = await orgRow(org.id);
    for (const [method, path, body] of routes) {
      const hidden = await raw(app, stranger.token, method, path(org.id), body);
      const absent = await raw(app, stranger.token, method, path(unknown), body);
      expect(hidden.status, `${method} ${path('{id}')}`).toBe(404);
      expect(hidden, `${method} ${path('{id}')}`).toEqual(absent);
      expect(JSON.parse(hidden.text)).toMatchObject({ code: 'not-found', request_id: 'compare-me' });
    }
    expect(await orgRow(org.id)).toEqual(before);
    expect(await app.sql`select user_id, role from organization_members where organization_id = ${org.id}`).toEqual([
      { user_id: owner.userId, role: 'owner' },
    ]);
    expect(await auditCount(app, org.id)).toBe(1);
  });
});
