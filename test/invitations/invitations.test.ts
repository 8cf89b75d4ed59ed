// Invitations (seed document 1, "Invitations", "Invitation page", "Invitation status"; DECISIONS.md §4):
// an Owner or Admin invites an address, the mail arrives over real SMTP with the link, and whoever signs
// in with that address verified reads the page, accepts or declines. Every refusal reads back that
// nothing changed; to anyone else an invitation answers exactly as an unknown id.
import { randomUUID } from 'node:crypto';
import { createClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { logIn, signUp, uniqueEmail } from '../support/auth.js';
import { auditOf, raw, signedIn as signIn, type Caller } from '../support/organizations.js';
import { outcome, refusal } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { invitationMail, linkedId, snapshot } from './support.js';

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
const slug = () => `inv-${Date.now().toString(36)}-${(n += 1)}`;

/** An organization of `owner` with one new account per role asked for. */
async function team(owner: Caller, wanted: Role[] = []): Promise<{ id: string; people: Caller[] }> {
  const { id } = await owner.api.organizationCreate({ body: { name: 'Acme', slug: slug() } });
  const people: Caller[] = [];
  for (const role of wanted) {
    const person = await signedIn(role);
    await owner.api.memberAdd({ path: { id }, body: { user_id: person.userId, role } });
    people.push(person);
  }
  return { id, people };
}

const state = (organizationId: string) => snapshot(app, organizationId);

describe('POST /organizations/{id}/invitations', () => {
  it('invites an address: the mail carries the link, the invitee reads the page and accepts, all audited', async () => {
    const owner = await signedIn('inviter');
    const { id } = await team(owner);
    const invitee = await signedIn('invitee');
    // The address is compared case-insensitively and kept lowercase.
    const created = await owner.api.invitationCreate({
      path: { id },
      body: { email: invitee.email.toUpperCase(), role: 'admin' },
    });
    const now = app.clock.now();
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      organization_id: id,
      email: invitee.email,
      role: 'admin',
      status: 'pending',
      inviter_user_id: owner.userId,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + 7 * 86_400_000).toISOString(),
      accepted_at: null,
      declined_at: null,
      revoked_at: null,
      reinvite_blocked_until: null,
    });
    expect(await auditOf(app, owner.lastRequestId())).toEqual({
      organization_id: id,
      action: 'invitation.created',
      actor_user_id: owner.userId,
      target_type: 'invitation',
      target_id: created.id,
      request_id: owner.lastRequestId(),
    });

    const mail = await invitationMail(smtp, created.id);
    expect(mail.to).toEqual([invitee.email]);
    expect(mail.subject).toBe('You are invited to join an organization');
    expect(mail.text).toContain(`${app.config.dashboardUrl}/invitations/${created.id}`);
    expect(mail.text).toContain('Test Person invites you to join Acme as admin.');
    expect(mail.text).toContain('expires 2026-11-28 12:00 UTC');
    const fromMail = linkedId(mail);
    expect(fromMail).toBe(created.id);

    // The page: the seed's fields exactly, no email.
    const page = await invitee.api.invitationGet({ path: { id: fromMail } });
    expect(page).toEqual({
      id: created.id,
      organization_id: id,
      organization_name: 'Acme',
      inviter_name: 'Test Person',
      created_at: created.created_at,
      expires_at: created.expires_at,
      role: 'admin',
      status: 'pending',
      inviter_avatar_asset_id: null,
      organization_icon_asset_id: null,
    });

    const membership = await invitee.api.invitationAccept({ path: { id: fromMail } });
    expect(membership).toEqual({
      created_at: app.clock.now().toISOString(),
      name: 'Test Person',
      organization_id: id,
      user_id: invitee.userId,
      role: 'admin',
      avatar_asset_id: null,
      email: invitee.email,
    });
    const entries = await app.sql<{ action: string; actor_user_id: string; target_id: string }[]>`
      select action, actor_user_id, target_id from audit_entries where request_id = ${invitee.lastRequestId()} order by seq`;
    expect(entries).toEqual([
      { action: 'invitation.accepted', actor_user_id: invitee.userId, target_id: created.id },
      { action: 'member.added', actor_user_id: invitee.userId, target_id: invitee.userId },
    ]);
    expect((await invitee.api.organizationGet({ path: { id } })).role).toBe('admin');
    expect((await invitee.api.invitationGet({ path: { id: created.id } })).status).toBe('accepted');
    const [listed] = await owner.api.invitationList({ path: { id } });
    expect(listed).toMatchObject({
      id: created.id,
      status: 'accepted',
      accepted_at: app.clock.now().toISOString(),
    });
  });

  it('invites an address that has no account yet: whoever signs up with it, verified, may accept', async () => {
    const owner = await signedIn('inviter-new');
    const { id } = await team(owner);
    const email = uniqueEmail('newcomer');
    const created = await owner.api.invitationCreate({ path: { id }, body: { email } });
    expect(created.role).toBe('member');
    const mail = await invitationMail(smtp, created.id);
    await signUp(app, smtp, email, 'correct horse battery staple');
    const session = await logIn(app, smtp, email, 'correct horse battery staple');
    const newcomer = createClient({ baseUrl: app.baseUrl, token: session.token, retries: 0 });
    expect((await newcomer.invitationGet({ path: { id: linkedId(mail) } })).role).toBe('member');
    expect((await newcomer.invitationAccept({ path: { id: created.id } })).role).toBe('member');
  });

  it('lets Admins invite up to their own rank; an Owner invitation is 403 member-outranks-caller', async () => {
    const owner = await signedIn('rank-owner');
    const { id, people } = await team(owner, ['admin']);
    const [admin] = people as [Caller];
    for (const role of ['member', 'billing', 'admin'] as const) {
      expect(
        (await admin.api.invitationCreate({ path: { id }, body: { email: uniqueEmail(role), role } })).role,
      ).toBe(role);
    }
    const before = await state(id);
    const err = await refusal(
      admin.api.invitationCreate({ path: { id }, body: { email: uniqueEmail('boss'), role: 'owner' } }),
    );
    expect([err.status, err.code]).toEqual([403, 'member-outranks-caller']);
    expect(await state(id)).toEqual(before);
  });

  it('refuses Billing and plain members (403) and non-members (404 as an unknown id), changing nothing', async () => {
    const owner = await signedIn('refuse-owner');
    const { id, people } = await team(owner, ['billing', 'member']);
    const outsider = await signedIn('outsider');
    const before = await state(id);
    for (const caller of people) {
      expect(
        await outcome(caller.api.invitationCreate({ path: { id }, body: { email: uniqueEmail('x') } })),
      ).toEqual([403, 'forbidden']);
      expect(await outcome(caller.api.invitationList({ path: { id } }))).toEqual([403, 'forbidden']);
    }
    const hidden = await raw(app, outsider.token, 'POST', `/organizations/${id}/invitations`, {
      email: uniqueEmail('x'),
    });
    const unknown = await raw(app, outsider.token, 'POST', `/organizations/${randomUUID()}/invitations`, {
      email: uniqueEmail('x'),
    });
    expect(hidden.status).toBe(404);
    expect(hidden).toEqual(unknown);
    expect(await outcome(outsider.api.invitationList({ path: { id } }))).toEqual([404, 'not-found']);
    expect(await state(id)).toEqual(before);
  });

  it('refuses a personal organization (422 member-personal-organization)', async () => {
    const me = await signedIn('personal');
    const before = await state(me.personalOrganizationId);
    const err = await refusal(
      me.api.invitationCreate({
        path: { id: me.personalOrganizationId },
        body: { email: uniqueEmail('friend') },
      }),
    );
    expect([err.status, err.code]).toEqual([422, 'member-personal-organization']);
    expect(await state(me.personalOrganizationId)).toEqual(before);
  });

  it('refuses a malformed address (400), changing nothing', async () => {
    const owner = await signedIn('bad-email');
    const { id } = await team(owner);
    const before = await state(id);
    for (const email of ['not-an-address', 'a@', '"quoted name"@example.com', 'a b@example.com', '']) {
      const answer = await raw(app, owner.token, 'POST', `/organizations/${id}/invitations`, { email });
      expect(answer.status, email).toBe(400);
      expect(JSON.parse(answer.text).code, email).toMatch(/^invalid-(request|field-value)$/);
    }
    expect(
      await outcome(
        owner.api.invitationCreate({ path: { id }, body: { email: uniqueEmail('x'), role: 'boss' as Role } }),
      ),
    ).toEqual([400, 'invalid-request']);
    expect(await state(id)).toEqual(before);
  });

  it('refuses a second invitation while one is pending (409 invitation-pending) and a member (409 already-a-member)', async () => {
    const owner = await signedIn('dupes');
    const { id, people } = await team(owner, ['member']);
    const [member] = people as [Caller];
    const email = uniqueEmail('twice');
    await owner.api.invitationCreate({ path: { id }, body: { email } });
    const before = await state(id);
    expect(
      await outcome(
        owner.api.invitationCreate({ path: { id }, body: { email: email.toUpperCase(), role: 'admin' } }),
      ),
    ).toEqual([409, 'invitation-pending']);
    expect(
      await outcome(owner.api.invitationCreate({ path: { id }, body: { email: member.email } })),
    ).toEqual([409, 'already-a-member']);
    expect(await state(id)).toEqual(before);
  });
});

describe('GET /organizations/{id}/invitations', () => {
  it('lists pending invitations first, each group newest first; ?status narrows', async () => {
    const owner = await signedIn('list');
    const { id, people } = await team(owner, ['admin']);
    const [admin] = people as [Caller];
    const made: string[] = [];
    for (const tag of ['a', 'b', 'c']) {
      app.clock.advance(1000);
      made.push((await owner.api.invitationCreate({ path: { id }, body: { email: uniqueEmail(tag) } })).id);
    }
    const [a, b, c] = made as [string, string, string];
    await owner.api.invitationRevoke({ path: { id, invitation_id: b } });
    const list = await admin.api.invitationList({ path: { id } });
    expect(list.map((i) => [i.id, i.status])).toEqual([
      [c, 'pending'],
      [a, 'pending'],
      [b, 'revoked'],
    ]);
    expect(
      (await owner.api.invitationList({ path: { id }, query: { status: 'revoked' } })).map((i) => i.id),
    ).toEqual([b]);
    expect(
      (await owner.api.invitationList({ path: { id }, query: { status: 'pending' } })).map((i) => i.id),
    ).toEqual([c, a]);
    expect(await owner.api.invitationList({ path: { id }, query: { status: 'expired' } })).toEqual([]);
  });
});

describe('DELETE /organizations/{id}/invitations/{invitation_id}', () => {
  it('revokes: the page reads revoked, the link can no longer be accepted or declined', async () => {
    const owner = await signedIn('revoke');
    const { id } = await team(owner);
    const invitee = await signedIn('revoked-invitee');
    const inv = await owner.api.invitationCreate({ path: { id }, body: { email: invitee.email } });
    await owner.api.invitationRevoke({ path: { id, invitation_id: inv.id } });
    expect(await auditOf(app, owner.lastRequestId())).toMatchObject({
      action: 'invitation.revoked',
      target_id: inv.id,
    });
    expect((await invitee.api.invitationGet({ path: { id: inv.id } })).status).toBe('revoked');

    const before = await state(id);
    for (const call of [
      () => invitee.api.invitationAccept({ path: { id: inv.id } }),
      () => invitee.api.invitationDecline({ path: { id: inv.id } }),
    ]) {
      const err = await refusal(call());
      expect([err.status, err.code, err.details]).toEqual([422, 'invitation-not-pending', 'revoked']);
    }
    // Revoking again changes nothing and says so with the same 204.
    await owner.api.invitationRevoke({ path: { id, invitation_id: inv.id } });
    expect(await state(id)).toEqual(before);
    expect(await outcome(invitee.api.organizationGet({ path: { id } }))).toEqual([404, 'not-found']);
  });

  it('refuses what a caller may not revoke, changing nothing', async () => {
    const owner = await signedIn('revoke-rules');
    const { id, people } = await team(owner, ['admin', 'member']);
    const [admin, member] = people as [Caller, Caller];
    const toOwner = await owner.api.invitationCreate({
      path: { id },
      body: { email: uniqueEmail('o'), role: 'owner' },
    });
    const toMember = await owner.api.invitationCreate({ path: { id }, body: { email: uniqueEmail('m') } });
    const other = await team(owner);
    const before = await state(id);
    expect(await outcome(admin.api.invitationRevoke({ path: { id, invitation_id: toOwner.id } }))).toEqual([
      403,
      'member-outranks-caller',
    ]);
    expect(await outcome(member.api.invitationRevoke({ path: { id, invitation_id: toMember.id } }))).toEqual([
      403,
      'forbidden',
    ]);
    // An invitation of another organization, and an unknown one, are 404 alike.
    expect(
      await outcome(owner.api.invitationRevoke({ path: { id: other.id, invitation_id: toMember.id } })),
    ).toEqual([404, 'not-found']);
    expect(await outcome(owner.api.invitationRevoke({ path: { id, invitation_id: randomUUID() } }))).toEqual([
      404,
      'not-found',
    ]);
    expect(await state(id)).toEqual(before);
  });
});

describe('the invitee routes', () => {
  it('answer anyone but the invitee exactly as an unknown id (status and body), changing nothing', async () => {
    const owner = await signedIn('masked');
    const { id } = await team(owner);
    const invitee = await signedIn('masked-invitee');
    const stranger = await signedIn('stranger');
    const inv = await owner.api.invitationCreate({ path: { id }, body: { email: invitee.email } });
    const before = await state(id);
    for (const [method, suffix] of [
      ['GET', ''],
      ['POST', '/accept'],
      ['POST', '/decline'],
      ['POST', '/allow-reinvite'],
    ] as const) {
      const other = await raw(app, stranger.token, method, `/invitations/${inv.id}${suffix}`);
      const unknown = await raw(app, stranger.token, method, `/invitations/${randomUUID()}${suffix}`);
      expect(other.status, `${method} ${suffix}`).toBe(404);
      expect(other, `${method} ${suffix}`).toEqual(unknown);
      // Even a member of the organization (here its owner) is not the invitee.
      expect(await raw(app, owner.token, method, `/invitations/${inv.id}${suffix}`)).toEqual(unknown);
    }
    expect(JSON.parse((await raw(app, stranger.token, 'GET', `/invitations/${inv.id}`)).text)).toEqual({
      type: '/docs/errors#not-found',
      title: 'Not found',
      status: 404,
      detail: 'No such invitation.',
      code: 'not-found',
      request_id: 'compare-me',
    });
    expect(await state(id)).toEqual(before);
  });

  it('need the address verified: the same account unverified gets the masked 404', async () => {
    const owner = await signedIn('unverified');
    const { id } = await team(owner);
    const invitee = await signedIn('unverified-invitee');
    const inv = await owner.api.invitationCreate({ path: { id }, body: { email: invitee.email } });
    await app.sql`update users set email_verified_at = null where id = ${invitee.userId}`;
    const before = await state(id);
    const unknown = await raw(app, invitee.token, 'POST', `/invitations/${randomUUID()}/accept`);
    expect(await raw(app, invitee.token, 'POST', `/invitations/${inv.id}/accept`)).toEqual(unknown);
    expect(await raw(app, invitee.token, 'GET', `/invitations/${inv.id}`)).toMatchObject({ status: 404 });
    expect(await state(id)).toEqual(before);
    await app.sql`update users set email_verified_at = ${app.clock.now()} where id = ${invitee.userId}`;
    expect((await invitee.api.invitationGet({ path: { id: inv.id } })).status).toBe('pending');
  });

  it('accept twice: the second is 422 invitation-not-pending (accepted), one membership', async () => {
    const owner = await signedIn('twice');
    const { id } = await team(owner);
    const invitee = await signedIn('twice-invitee');
    const inv = await owner.api.invitationCreate({
      path: { id },
      body: { email: invitee.email, role: 'billing' },
    });
    await invitee.api.invitationAccept({ path: { id: inv.id } });
    const before = await state(id);
    const err = await refusal(invitee.api.invitationAccept({ path: { id: inv.id } }));
    expect([err.status, err.code, err.details]).toEqual([422, 'invitation-not-pending', 'accepted']);
    expect(await state(id)).toEqual(before);
    expect(before.members.filter((m) => m.user_id === invitee.userId)).toEqual([
      { user_id: invitee.userId, role: 'billing' },
    ]);
  });

  it('accepting when already a member keeps the membership as it is', async () => {
    const owner = await signedIn('already');
    const { id } = await team(owner);
    const invitee = await signedIn('already-invitee');
    const inv = await owner.api.invitationCreate({
      path: { id },
      body: { email: invitee.email, role: 'admin' },
    });
    await owner.api.memberAdd({ path: { id }, body: { user_id: invitee.userId, role: 'member' } });
    const kept = await invitee.api.invitationAccept({ path: { id: inv.id } });
    expect(kept).toMatchObject({ user_id: invitee.userId, role: 'member' });
    const actions = await app.sql<{ action: string }[]>`
      select action from audit_entries where request_id = ${invitee.lastRequestId()}`;
    expect(actions.map((a) => a.action)).toEqual(['invitation.accepted']);
  });

  it('decline, then allow-reinvite: audited; allow-reinvite again and on other statuses as documented', async () => {
    const owner = await signedIn('decline');
    const { id } = await team(owner);
    const invitee = await signedIn('decline-invitee');
    const inv = await owner.api.invitationCreate({ path: { id }, body: { email: invitee.email } });
    let before = await state(id);
    const early = await refusal(invitee.api.invitationAllowReinvite({ path: { id: inv.id } }));
    expect([early.status, early.code, early.details]).toEqual([422, 'invitation-not-declined', 'pending']);
    expect(await state(id)).toEqual(before);

    await invitee.api.invitationDecline({ path: { id: inv.id } });
    expect(await auditOf(app, invitee.lastRequestId())).toMatchObject({
      organization_id: id,
      action: 'invitation.declined',
      actor_user_id: invitee.userId,
      target_id: inv.id,
    });
    expect((await invitee.api.invitationGet({ path: { id: inv.id } })).status).toBe('declined');
    before = await state(id);
    const accept = await refusal(invitee.api.invitationAccept({ path: { id: inv.id } }));
    expect([accept.status, accept.code, accept.details]).toEqual([422, 'invitation-not-pending', 'declined']);
    expect(await outcome(owner.api.invitationRevoke({ path: { id, invitation_id: inv.id } }))).toEqual([
      422,
      'invitation-not-pending',
    ]);
    expect(await state(id)).toEqual(before);

    // Within the cool-down, the same address cannot be invited again.
    const blocked = await refusal(
      owner.api.invitationCreate({ path: { id }, body: { email: invitee.email } }),
    );
    expect([blocked.status, blocked.code]).toEqual([422, 'reinvite-cooldown']);
    expect(blocked.details).toEqual({
      until: new Date(app.clock.now().getTime() + 30 * 86_400_000).toISOString(),
    });
    expect((await owner.api.invitationList({ path: { id } }))[0]!.reinvite_blocked_until).toBe(
      new Date(app.clock.now().getTime() + 30 * 86_400_000).toISOString(),
    );
    expect(await state(id)).toEqual(before);

    await invitee.api.invitationAllowReinvite({ path: { id: inv.id } });
    expect(await auditOf(app, invitee.lastRequestId())).toMatchObject({
      action: 'invitation.reinvite_allowed',
      actor_user_id: invitee.userId,
      target_id: inv.id,
    });
    const after = await state(id);
    await invitee.api.invitationAllowReinvite({ path: { id: inv.id } });
    expect(await state(id)).toEqual(after);
    expect((await owner.api.invitationList({ path: { id } }))[0]!.reinvite_blocked_until).toBeNull();
    const again = await owner.api.invitationCreate({ path: { id }, body: { email: invitee.email } });
    expect(again.status).toBe('pending');
    expect((await invitee.api.invitationAccept({ path: { id: again.id } })).organization_id).toBe(id);
  });
});
