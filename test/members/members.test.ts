// Organization members (seed document 1, "Membership", "Members", "Errors"): list, add, change a role
// and remove, each refusal with a read-back that nothing changed and each write with its audit entry.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { auditCount, auditOf, raw, signedIn as signIn, type Caller } from '../support/organizations.js';
import { outcome, refusal } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

type Role = 'owner' | 'admin' | 'billing' | 'member';

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
const slug = () => `team-${Date.now().toString(36)}-${(n += 1)}`;

const roles = async (organizationId: string) =>
  Object.fromEntries(
    (
      await app.sql<{ user_id: string; role: string }[]>`
        select user_id, role from organization_members where organization_id = ${organizationId}`
    ).map((r) => [r.user_id, r.role]),
  );

/** An organization of `owner` with one new account per role asked for. */
async function team(owner: Caller, wanted: Role[]): Promise<{ id: string; people: Caller[] }> {
  const { id } = await owner.api.organizationCreate({ body: { name: 'Team', slug: slug() } });
  const people: Caller[] = [];
  for (const role of wanted) {
    const person = await signedIn(role);
    await owner.api.memberAdd({ path: { id }, body: { user_id: person.userId, role } });
    people.push(person);
  }
  return { id, people };
}

describe('GET /organizations/{id}/members', () => {
  it('lists every member for any member: Owners first, then by join time', async () => {
    const owner = await signedIn('list');
    const { id } = await owner.api.organizationCreate({ body: { name: 'Team', slug: slug() } });
    const added: Caller[] = [];
    for (const role of ['member', 'owner', 'admin', 'billing'] as const) {
      app.clock.advance(1000);
      const person = await signedIn(role);
      await owner.api.memberAdd({ path: { id }, body: { user_id: person.userId, role } });
      added.push(person);
    }
    const [member, secondOwner, admin, billing] = added as [Caller, Caller, Caller, Caller];
    const list = await member.api.memberList({ path: { id } });
    expect(list.map((m) => [m.user_id, m.role])).toEqual([
      [owner.userId, 'owner'],
      [secondOwner.userId, 'owner'],
      [member.userId, 'member'],
      [admin.userId, 'admin'],
      [billing.userId, 'billing'],
    ]);
    expect(list[2]).toEqual({
      created_at: expect.stringMatching(/Z$/),
      name: 'Test Person',
      organization_id: id,
      user_id: member.userId,
      role: 'member',
      avatar_asset_id: null,
      email: member.email,
    });
    // Added by id, each shows their address to themselves only (DECISIONS.md §7).
    expect(await billing.api.memberList({ path: { id } })).toEqual(
      list.map((m) =>
        m.user_id === billing.userId ? { ...m, email: billing.email } : m.user_id === owner.userId ? m : { ...m, email: null },
      ),
    );
  }, 90_000);
});

describe('POST /organizations/{id}/members', () => {
  it('adds a member (role member by default), audited', async () => {
    const owner = await signedIn('add');
    const { id } = await owner.api.organizationCreate({ body: { name: 'Team', slug: slug() } });
    const person = await signedIn('added');
    // The role left out: a plain member.
    const added = await raw(app, owner.token, 'POST', `/organizations/${id}/members`, { user_id: person.userId }, 'add-default');
    const m = JSON.parse(added.text) as unknown;
    expect(added.status).toBe(200);
    expect(m).toEqual({
      created_at: app.clock.now().toISOString(),
      name: 'Test Person',
      organization_id: id,
      user_id: person.userId,
      role: 'member',
      avatar_asset_id: null,
      // Added by id: the adder learns no address (DECISIONS.md §7).
      email: null,
    });
    expect(await auditOf(app, 'add-default')).toEqual({
      organization_id: id,
      action: 'member.added',
      actor_user_id: owner.userId,
      target_type: 'member',
      target_id: person.userId,
      request_id: 'add-default',
    });
    // The new member now reads the organization, with their own role.
    expect((await person.api.organizationGet({ path: { id } })).role).toBe('member');
  });

  it('answers a re-add with the membership unchanged (200), recording nothing', async () => {
    const owner = await signedIn('readd');
    const { id, people } = await team(owner, ['billing']);
    const [billing] = people as [Caller];
    const before = await roles(id);
    const count = await auditCount(app, id);
    const again = await owner.api.memberAdd({ path: { id }, body: { user_id: billing.userId, role: 'admin' } });
    expect(again).toMatchObject({ user_id: billing.userId, role: 'billing' });
    expect(await roles(id)).toEqual(before);
    expect(await auditCount(app, id)).toBe(count);
  });

  it('lets Admins add up to their own rank; a role above theirs is 403 member-outranks-caller', async () => {
    const owner = await signedIn('add-admin');
    const { id, people } = await team(owner, ['admin']);
    const [admin] = people as [Caller];
    for (const role of ['member', 'billing', 'admin'] as const) {
      const person = await signedIn(role);
      expect((await admin.api.memberAdd({ path: { id }, body: { user_id: person.userId, role } })).role).toBe(role);
      expect(await auditOf(app, admin.lastRequestId())).toMatchObject({ action: 'member.added', actor_user_id: admin.userId });
    }
    const person = await signedIn('would-be-owner');
    const before = await roles(id);
    const count = await auditCount(app, id);
    const err = await refusal(admin.api.memberAdd({ path: { id }, body: { user_id: person.userId, role: 'owner' } }));
    expect([err.status, err.code]).toEqual([403, 'member-outranks-caller']);
    expect(await roles(id)).toEqual(before);
    expect(await auditCount(app, id)).toBe(count);
  });

  it('refuses Billing and plain members (403 forbidden), changing nothing', async () => {
    const owner = await signedIn('add-403');
    const { id, people } = await team(owner, ['billing', 'member']);
    const person = await signedIn('outsider');
    const before = await roles(id);
    for (const caller of people) {
      expect(await outcome(caller.api.memberAdd({ path: { id }, body: { user_id: person.userId, role: 'member' } }))).toEqual([403, 'forbidden']);
    }
    expect(await roles(id)).toEqual(before);
  });

  it('refuses an unknown or deleted user with 404 "No such user."', async () => {
    const owner = await signedIn('add-404');
    const { id } = await owner.api.organizationCreate({ body: { name: 'Team', slug: slug() } });
    const gone = await signedIn('deleted');
    await app.sql`update users set deleted_at = now() where id = ${gone.userId}`;
    const before = await roles(id);
    for (const userId of [randomUUID(), gone.userId]) {
      const err = await refusal(owner.api.memberAdd({ path: { id }, body: { user_id: userId, role: 'member' } }));
      expect([err.status, err.code, err.detail]).toEqual([404, 'not-found', 'No such user.']);
    }
    expect(await roles(id)).toEqual(before);
    expect(await auditCount(app, id)).toBe(1);
  });

  it('refuses to add anyone to a personal organization (422 member-personal-organization)', async () => {
    const me = await signedIn('add-personal');
    const person = await signedIn('friend');
    const err = await refusal(
      me.api.memberAdd({ path: { id: me.personalOrganizationId }, body: { user_id: person.userId, role: 'member' } }),
    );
    expect([err.status, err.code]).toEqual([422, 'member-personal-organization']);
    expect(await roles(me.personalOrganizationId)).toEqual({ [me.userId]: 'owner' });
    expect(await auditCount(app, me.personalOrganizationId)).toBe(0);
  });
});

describe('PATCH /organizations/{id}/members/{user_id}', () => {
  it('changes a role, audited; the same role again changes and records nothing', async () => {
    const owner = await signedIn('patch');
    const { id, people } = await team(owner, ['member']);
    const [member] = people as [Caller];
    const m = await owner.api.memberUpdate({ path: { id, user_id: member.userId }, body: { role: 'admin' } });
    expect(m).toMatchObject({ user_id: member.userId, role: 'admin', organization_id: id });
    expect(await auditOf(app, owner.lastRequestId())).toEqual({
      organization_id: id,
      action: 'member.role_changed',
      actor_user_id: owner.userId,
      target_type: 'member',
      target_id: member.userId,
      request_id: owner.lastRequestId(),
    });
    const count = await auditCount(app, id);
    expect((await owner.api.memberUpdate({ path: { id, user_id: member.userId }, body: { role: 'admin' } })).role).toBe('admin');
    expect(await auditCount(app, id)).toBe(count);
    expect((await member.api.organizationGet({ path: { id } })).role).toBe('admin');
  });

  it('lets Admins change members up to their own rank, themselves included, but never touch or make an Owner', async () => {
    const owner = await signedIn('patch-admin');
    const { id, people } = await team(owner, ['admin', 'admin', 'member']);
    const [admin, otherAdmin, member] = people as [Caller, Caller, Caller];
    expect((await admin.api.memberUpdate({ path: { id, user_id: member.userId }, body: { role: 'billing' } })).role).toBe('billing');
    expect((await admin.api.memberUpdate({ path: { id, user_id: otherAdmin.userId }, body: { role: 'member' } })).role).toBe('member');
    const before = await roles(id);
    const count = await auditCount(app, id);
    for (const [target, role] of [
      [owner.userId, 'member'],
      [owner.userId, 'owner'],
      [member.userId, 'owner'],
      [admin.userId, 'owner'],
    ] as const) {
      const err = await refusal(admin.api.memberUpdate({ path: { id, user_id: target }, body: { role } }));
      expect([err.status, err.code]).toEqual([403, 'member-outranks-caller']);
    }
    expect(await roles(id)).toEqual(before);
    expect(await auditCount(app, id)).toBe(count);
    // Stepping down is allowed.
    expect((await admin.api.memberUpdate({ path: { id, user_id: admin.userId }, body: { role: 'member' } })).role).toBe('member');
  });

  it('refuses Billing and plain members (403 forbidden) and an unknown member (404)', async () => {
    const owner = await signedIn('patch-403');
    const { id, people } = await team(owner, ['billing', 'member']);
    const [billing, member] = people as [Caller, Caller];
    const before = await roles(id);
    expect(await outcome(billing.api.memberUpdate({ path: { id, user_id: member.userId }, body: { role: 'billing' } }))).toEqual([
      403,
      'forbidden',
    ]);
    expect(await outcome(member.api.memberUpdate({ path: { id, user_id: member.userId }, body: { role: 'admin' } }))).toEqual([
      403,
      'forbidden',
    ]);
    const stranger = await signedIn('not-in-team');
    for (const userId of [randomUUID(), stranger.userId]) {
      const err = await refusal(owner.api.memberUpdate({ path: { id, user_id: userId }, body: { role: 'admin' } }));
      expect([err.status, err.code, err.detail]).toEqual([404, 'not-found', 'No such member.']);
    }
    expect(await roles(id)).toEqual(before);
  });

  it('refuses demoting the last Owner (422 last-owner); with two, one may step down', async () => {
    const owner = await signedIn('patch-last');
    const { id, people } = await team(owner, ['admin']);
    const [admin] = people as [Caller];
    const count = await auditCount(app, id);
    for (const role of ['admin', 'billing', 'member'] as const) {
      const err = await refusal(owner.api.memberUpdate({ path: { id, user_id: owner.userId }, body: { role } }));
      expect([err.status, err.code]).toEqual([422, 'last-owner']);
    }
    expect(await roles(id)).toEqual({ [owner.userId]: 'owner', [admin.userId]: 'admin' });
    expect(await auditCount(app, id)).toBe(count);
    await owner.api.memberUpdate({ path: { id, user_id: admin.userId }, body: { role: 'owner' } });
    expect((await owner.api.memberUpdate({ path: { id, user_id: owner.userId }, body: { role: 'admin' } })).role).toBe('admin');
    expect(await roles(id)).toEqual({ [owner.userId]: 'admin', [admin.userId]: 'owner' });
  });

  it('refuses changing the personal owner\'s role (422 member-personal-organization)', async () => {
    const me = await signedIn('patch-personal');
    const err = await refusal(
      me.api.memberUpdate({ path: { id: me.personalOrganizationId, user_id: me.userId }, body: { role: 'admin' } }),
    );
    expect([err.status, err.code]).toEqual([422, 'member-personal-organization']);
    expect(await roles(me.personalOrganizationId)).toEqual({ [me.userId]: 'owner' });
    expect(await auditCount(app, me.personalOrganizationId)).toBe(0);
  });
});

describe('DELETE /organizations/{id}/members/{user_id}', () => {
  it('lets any member remove themselves, audited; then the organization is hidden from them', async () => {
    const owner = await signedIn('leave');
    const { id, people } = await team(owner, ['member', 'billing']);
    const [member, billing] = people as [Caller, Caller];
    await member.api.memberRemove({ path: { id, user_id: member.userId } });
    expect(await auditOf(app, member.lastRequestId())).toEqual({
      organization_id: id,
      action: 'member.removed',
      actor_user_id: member.userId,
      target_type: 'member',
      target_id: member.userId,
      request_id: member.lastRequestId(),
    });
    expect(await roles(id)).toEqual({ [owner.userId]: 'owner', [billing.userId]: 'billing' });
    expect(await outcome(member.api.organizationGet({ path: { id } }))).toEqual([404, 'not-found']);
    // Path ids compare as uuids, whatever their case.
    await billing.api.memberRemove({ path: { id, user_id: billing.userId.toUpperCase() } });
    expect(await roles(id)).toEqual({ [owner.userId]: 'owner' });
  });

  it('lets Owners and Admins remove others up to their own rank', async () => {
    const owner = await signedIn('remove');
    const { id, people } = await team(owner, ['admin', 'admin', 'member', 'owner']);
    const [admin, otherAdmin, member, secondOwner] = people as [Caller, Caller, Caller, Caller];
    await admin.api.memberRemove({ path: { id, user_id: member.userId } });
    expect(await auditOf(app, admin.lastRequestId())).toMatchObject({ action: 'member.removed', actor_user_id: admin.userId, target_id: member.userId });
    await admin.api.memberRemove({ path: { id, user_id: otherAdmin.userId } });
    const before = await roles(id);
    const count = await auditCount(app, id);
    const err = await refusal(admin.api.memberRemove({ path: { id, user_id: owner.userId } }));
    expect([err.status, err.code]).toEqual([403, 'member-outranks-caller']);
    expect(await roles(id)).toEqual(before);
    expect(await auditCount(app, id)).toBe(count);
    await owner.api.memberRemove({ path: { id, user_id: secondOwner.userId } });
    await owner.api.memberRemove({ path: { id, user_id: admin.userId } });
    expect(await roles(id)).toEqual({ [owner.userId]: 'owner' });
  });

  it('refuses Billing and plain members removing others (403 forbidden) and an unknown member (404)', async () => {
    const owner = await signedIn('remove-403');
    const { id, people } = await team(owner, ['billing', 'member']);
    const [billing, member] = people as [Caller, Caller];
    const before = await roles(id);
    expect(await outcome(billing.api.memberRemove({ path: { id, user_id: member.userId } }))).toEqual([403, 'forbidden']);
    expect(await outcome(member.api.memberRemove({ path: { id, user_id: billing.userId } }))).toEqual([403, 'forbidden']);
    const err = await refusal(owner.api.memberRemove({ path: { id, user_id: randomUUID() } }));
    expect([err.status, err.code, err.detail]).toEqual([404, 'not-found', 'No such member.']);
    expect(await roles(id)).toEqual(before);
  });

  it('refuses removing the last Owner (422 last-owner), themselves included', async () => {
    const owner = await signedIn('remove-last');
    const { id, people } = await team(owner, ['admin']);
    const count = await auditCount(app, id);
    const err = await refusal(owner.api.memberRemove({ path: { id, user_id: owner.userId } }));
    expect([err.status, err.code]).toEqual([422, 'last-owner']);
    expect(await roles(id)).toEqual({ [owner.userId]: 'owner', [people[0]!.userId]: 'admin' });
    expect(await auditCount(app, id)).toBe(count);
  });

  it('refuses removing the personal owner (422 member-personal-organization)', async () => {
    const me = await signedIn('remove-personal');
    const err = await refusal(me.api.memberRemove({ path: { id: me.personalOrganizationId, user_id: me.userId } }));
    expect([err.status, err.code]).toEqual([422, 'member-personal-organization']);
    expect(await roles(me.personalOrganizationId)).toEqual({ [me.userId]: 'owner' });
  });
});
