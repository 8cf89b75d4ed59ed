// The time rules of invitations on a frozen clock (DECISIONS.md §4: an invitation expires 7 days after
// it is made; seed "Limits": a 30-day re-invite cool-down after a decline). Access tokens live 15
// minutes on the same clock, so whoever acts after the clock moved days on signs in again first.
import type { SvcClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { signedIn as signIn, type Caller } from '../support/organizations.js';
import { outcome, refusal } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { signInAgain, snapshot } from './support.js';

const DAY = 86_400_000;
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

let n = 0;
const slug = () => `exp-${Date.now().toString(36)}-${(n += 1)}`;

/** A new session of the same account, valid at the clock's time now. */
const again = (caller: Caller): Promise<SvcClient> => signInAgain(app, smtp, caller.email);

describe('an invitation 7 days old', () => {
  it('reads expired from expires_at on, and can then be neither accepted, declined nor revoked', async () => {
    const owner = await signIn(app, smtp, 'exp-owner');
    const invitee = await signIn(app, smtp, 'exp-invitee');
    const { id } = await owner.api.organizationCreate({ body: { name: 'Later', slug: slug() } });
    const inv = await owner.api.invitationCreate({ path: { id }, body: { email: invitee.email } });

    app.clock.advance(7 * DAY - 1000);
    const inviteeNow = await again(invitee);
    expect((await inviteeNow.invitationGet({ path: { id: inv.id } })).status).toBe('pending');
    app.clock.advance(1000);
    expect(app.clock.now().toISOString()).toBe(inv.expires_at);
    expect((await inviteeNow.invitationGet({ path: { id: inv.id } })).status).toBe('expired');

    const ownerNow = await again(owner);
    const before = await snapshot(app, id);
    for (const call of [
      () => inviteeNow.invitationAccept({ path: { id: inv.id } }),
      () => inviteeNow.invitationDecline({ path: { id: inv.id } }),
      () => ownerNow.invitationRevoke({ path: { id, invitation_id: inv.id } }),
    ]) {
      const err = await refusal(call());
      expect([err.status, err.code, err.details]).toEqual([422, 'invitation-not-pending', 'expired']);
    }
    expect(await outcome(inviteeNow.organizationGet({ path: { id } }))).toEqual([404, 'not-found']);
    expect(await snapshot(app, id)).toEqual(before);

    const listed = await ownerNow.invitationList({ path: { id }, query: { status: 'expired' } });
    expect(listed.map((i) => [i.id, i.status])).toEqual([[inv.id, 'expired']]);
    expect(await ownerNow.invitationList({ path: { id }, query: { status: 'pending' } })).toEqual([]);

    // An expired invitation holds nothing back: the address may be invited again, and that one works.
    const fresh = await ownerNow.invitationCreate({ path: { id }, body: { email: invitee.email } });
    expect((await inviteeNow.invitationAccept({ path: { id: fresh.id } })).role).toBe('member');
    expect((await inviteeNow.invitationGet({ path: { id: inv.id } })).status).toBe('expired');
  });
});

describe('the re-invite cool-down after a decline', () => {
  it('refuses the same address for 30 days (422 reinvite-cooldown), then allows it', async () => {
    const owner = await signIn(app, smtp, 'cool-owner');
    const invitee = await signIn(app, smtp, 'cool-invitee');
    const { id } = await owner.api.organizationCreate({ body: { name: 'Patient', slug: slug() } });
    const inv = await owner.api.invitationCreate({ path: { id }, body: { email: invitee.email } });
    await invitee.api.invitationDecline({ path: { id: inv.id } });
    const declinedAt = app.clock.now().getTime();

    app.clock.advance(30 * DAY - 1000);
    const ownerNow = await again(owner);
    const before = await snapshot(app, id);
    const err = await refusal(
      ownerNow.invitationCreate({ path: { id }, body: { email: invitee.email.toUpperCase() } }),
    );
    expect([err.status, err.code]).toEqual([422, 'reinvite-cooldown']);
    expect(err.details).toEqual({ until: new Date(declinedAt + 30 * DAY).toISOString() });
    expect(await snapshot(app, id)).toEqual(before);

    // Another organization is not held back by this decline.
    const elsewhere = await ownerNow.organizationCreate({ body: { name: 'Other', slug: slug() } });
    expect(
      (await ownerNow.invitationCreate({ path: { id: elsewhere.id }, body: { email: invitee.email } }))
        .status,
    ).toBe('pending');

    app.clock.advance(1000);
    expect((await ownerNow.invitationList({ path: { id } }))[0]!.reinvite_blocked_until).toBeNull();
    const again30 = await ownerNow.invitationCreate({ path: { id }, body: { email: invitee.email } });
    expect(again30.status).toBe('pending');
    const inviteeNow = await again(invitee);
    expect((await inviteeNow.invitationAccept({ path: { id: again30.id } })).organization_id).toBe(id);
  });
});
