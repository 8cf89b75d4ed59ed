// Adding a member directly by id (DECISIONS.md §7, issue 26): no way round a declined invitation's
// cool-down (422 reinvite-cooldown), and no way to learn an address from an id (the member shows
// `email: null` to everyone but themselves).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { signedIn as signIn } from '../support/organizations.js';
import { refusal } from '../support/refusal.js';
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
const slug = () => `direct-${Date.now().toString(36)}-${(n += 1)}`;

const members = async (organizationId: string) =>
  (
    await app.sql<{ user_id: string; role: string }[]>`
      select user_id, role from organization_members where organization_id = ${organizationId} order by user_id`
  ).map((r) => `${r.user_id}:${r.role}`);

describe('POST /organizations/{id}/members after a decline', () => {
  it('refuses the add within the cool-down (422 reinvite-cooldown), adding nothing; allows it once lifted', async () => {
    const owner = await signedIn('cooldown-owner');
    const invitee = await signedIn('cooldown-invitee');
    const { id } = await owner.api.organizationCreate({ body: { name: 'Team', slug: slug() } });
    const invitation = await owner.api.invitationCreate({ path: { id }, body: { email: invitee.email, role: 'member' } });
    await invitee.api.invitationDecline({ path: { id: invitation.id } });

    const before = await members(id);
    for (const role of ['owner', 'member'] as const) {
      const err = await refusal(owner.api.memberAdd({ path: { id }, body: { user_id: invitee.userId, role } }));
      expect([err.status, err.code]).toEqual([422, 'reinvite-cooldown']);
      expect(JSON.stringify(err.problem)).not.toContain(invitee.email);
    }
    expect(await members(id)).toEqual(before);
    // The invitee lifts the cool-down: the add goes through.
    await invitee.api.invitationAllowReinvite({ path: { id: invitation.id } });
    const added = await owner.api.memberAdd({ path: { id }, body: { user_id: invitee.userId } });
    expect(added).toMatchObject({ user_id: invitee.userId, role: 'member', email: null });
  }, 90_000);

  it('shows a member added by id without an address to everyone but themselves', async () => {
    const owner = await signedIn('email-owner');
    const added = await signedIn('email-added');
    const invited = await signedIn('email-invited');
    const { id } = await owner.api.organizationCreate({ body: { name: 'Team', slug: slug() } });

    const answer = await owner.api.memberAdd({ path: { id }, body: { user_id: added.userId, role: 'owner' } });
    expect(answer.email).toBeNull();
    // Invited by address and accepted: the inviter knew the address already.
    const invitation = await owner.api.invitationCreate({ path: { id }, body: { email: invited.email, role: 'member' } });
    await invited.api.invitationAccept({ path: { id: invitation.id } });

    const emails = async (viewer: typeof owner) =>
      Object.fromEntries((await viewer.api.memberList({ path: { id } })).map((m) => [m.user_id, m.email]));
    expect(await emails(owner)).toEqual({ [owner.userId]: owner.email, [added.userId]: null, [invited.userId]: invited.email });
    expect(await emails(invited)).toEqual({ [owner.userId]: owner.email, [added.userId]: null, [invited.userId]: invited.email });
    expect(await emails(added)).toEqual({ [owner.userId]: owner.email, [added.userId]: added.email, [invited.userId]: invited.email });
    // Adding again answers the membership as it is, still without the address.
    expect((await owner.api.memberAdd({ path: { id }, body: { user_id: added.userId } })).email).toBeNull();
    expect((await owner.api.memberUpdate({ path: { id, user_id: added.userId }, body: { role: 'admin' } })).email).toBeNull();
  }, 90_000);
});
