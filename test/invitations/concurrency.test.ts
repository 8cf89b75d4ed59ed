// Accepting is atomic (seed "Invitations"): two accepts of one invitation sent at once make one
// membership, once, whether both reach one API process or one reaches each of two. To make the requests
// really overlap, the test holds the organization's lock (which every decision on an invitation takes
// first) while they are sent, waits until PostgreSQL shows both waiting on a lock, then lets them go.
import { createClient, type SvcClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { signedIn as signIn, type Caller } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { startSecondProcess, type SecondProcess } from '../support/second-process.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let second: SecondProcess;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  // The second process runs on real time: set the test clock to now so tokens and expiry agree.
  app.clock.followRealTime();
  second = await startSecondProcess(app, { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' });
}, 60_000);
afterAll(async () => {
  await second?.stop();
  await app?.close();
  await smtp?.close();
});

let n = 0;
const slug = () => `race-${Date.now().toString(36)}-${(n += 1)}`;

/** Backends of this database waiting on a lock. */
async function lockWaiters(): Promise<number> {
  const [row] = await app.sql<{ n: number }[]>`
    select count(*)::int as n from pg_stat_activity
    where datname = current_database() and wait_event_type = 'Lock'`;
  return row!.n;
}

/** Sends the requests while the test holds the organization's lock; lets go once all of them wait. */
async function overlapping<T>(organizationId: string, requests: (() => Promise<T>)[]): Promise<T[]> {
  let results: Promise<T[]> | undefined;
  await app.sql.begin(async (tx) => {
    await tx`select 1 from organizations where id = ${organizationId} for update`;
    results = Promise.all(requests.map((r) => r()));
    const deadline = Date.now() + 10_000;
    while ((await lockWaiters()) < requests.length) {
      if (Date.now() > deadline) throw new Error('the requests never waited on the lock');
      await new Promise((r) => setTimeout(r, 5));
    }
  });
  return results!;
}

/** An organization of a new owner, and an invitation of a new account into it. */
async function invited(role: 'member' | 'admin' = 'member') {
  const owner = await signIn(app, smtp, 'race-owner');
  const invitee = await signIn(app, smtp, 'race-invitee');
  const { id } = await owner.api.organizationCreate({ body: { name: 'Race', slug: slug() } });
  const inv = await owner.api.invitationCreate({ path: { id }, body: { email: invitee.email, role } });
  return { owner, invitee, organizationId: id, invitationId: inv.id };
}

async function memberships(organizationId: string, userId: string) {
  return app.sql<{ role: string }[]>`
    select role from organization_members where organization_id = ${organizationId} and user_id = ${userId}`;
}

async function actions(organizationId: string): Promise<string[]> {
  const rows = await app.sql<{ action: string }[]>`
    select action from audit_entries where organization_id = ${organizationId} and action <> 'organization.created' order by seq`;
  return rows.map((r) => r.action);
}

async function statusOf(invitationId: string): Promise<string | undefined> {
  const [row] = await app.sql<
    { status: string }[]
  >`select status from invitations where id = ${invitationId}`;
  return row?.status;
}

const onSecond = (caller: Caller): SvcClient =>
  createClient({ baseUrl: second.baseUrl, token: caller.token, retries: 0 });

const RUNS = [1, 2, 3, 4, 5];

describe('two accepts of one invitation at once', () => {
  it.each(RUNS)(
    'on one process: one membership; the other is 422 invitation-not-pending (run %i)',
    async () => {
      const { invitee, organizationId, invitationId } = await invited('admin');
      const results = await overlapping(organizationId, [
        () => outcome(invitee.api.invitationAccept({ path: { id: invitationId } })),
        () => outcome(invitee.api.invitationAccept({ path: { id: invitationId } })),
      ]);
      expect(results.filter((r) => r === 'ok')).toHaveLength(1);
      expect(results.filter((r) => r !== 'ok')).toEqual([[422, 'invitation-not-pending']]);
      expect(await memberships(organizationId, invitee.userId)).toEqual([{ role: 'admin' }]);
      expect(await actions(organizationId)).toEqual([
        'invitation.created',
        'invitation.accepted',
        'member.added',
      ]);
    },
  );

  it.each(RUNS)(
    'on two processes: one membership; the other is 422 invitation-not-pending (run %i)',
    async () => {
      const { invitee, organizationId, invitationId } = await invited();
      const results = await overlapping(organizationId, [
        () => outcome(invitee.api.invitationAccept({ path: { id: invitationId } })),
        () => outcome(onSecond(invitee).invitationAccept({ path: { id: invitationId } })),
      ]);
      expect(results.filter((r) => r === 'ok')).toHaveLength(1);
      expect(results.filter((r) => r !== 'ok')).toEqual([[422, 'invitation-not-pending']]);
      expect(await memberships(organizationId, invitee.userId)).toEqual([{ role: 'member' }]);
      expect(await actions(organizationId)).toEqual([
        'invitation.created',
        'invitation.accepted',
        'member.added',
      ]);
    },
  );
});

describe('an accept racing a decline or a revoke', () => {
  it.each(RUNS)('accept and decline: exactly one decides the invitation (run %i)', async () => {
    const { invitee, organizationId, invitationId } = await invited();
    const [accepted, declined] = await overlapping(organizationId, [
      () => outcome(invitee.api.invitationAccept({ path: { id: invitationId } })),
      () => outcome(onSecond(invitee).invitationDecline({ path: { id: invitationId } })),
    ]);
    const status = await statusOf(invitationId);
    if (accepted === 'ok') {
      expect([status, declined]).toEqual(['accepted', [422, 'invitation-not-pending']]);
      expect(await memberships(organizationId, invitee.userId)).toHaveLength(1);
    } else {
      expect([status, accepted, declined]).toEqual(['declined', [422, 'invitation-not-pending'], 'ok']);
      expect(await memberships(organizationId, invitee.userId)).toEqual([]);
    }
  });

  it.each(RUNS)('accept and revoke: a revoked invitation never makes a member (run %i)', async () => {
    const { owner, invitee, organizationId, invitationId } = await invited();
    const [accepted, revoked] = await overlapping(organizationId, [
      () => outcome(invitee.api.invitationAccept({ path: { id: invitationId } })),
      () =>
        outcome(
          onSecond(owner).invitationRevoke({ path: { id: organizationId, invitation_id: invitationId } }),
        ),
    ]);
    const status = await statusOf(invitationId);
    if (accepted === 'ok') {
      expect([status, revoked]).toEqual(['accepted', [422, 'invitation-not-pending']]);
      expect(await memberships(organizationId, invitee.userId)).toHaveLength(1);
    } else {
      expect([status, accepted, revoked]).toEqual(['revoked', [422, 'invitation-not-pending'], 'ok']);
      expect(await memberships(organizationId, invitee.userId)).toEqual([]);
    }
  });
});
