// The last-owner rules hold under concurrency: every membership change takes the organization's lock
// first, so two changes of the last two Owners are decided one after the other. To make the requests
// really overlap, the test holds that lock itself while both are sent, then lets them go together.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { signedIn as signIn, type Caller } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let a: Caller;
let b: Caller;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  a = await signIn(app, smtp, 'owner-a');
  b = await signIn(app, smtp, 'owner-b');
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

let n = 0;
/** A fresh organization whose only Owners are a and b. */
async function twoOwners(): Promise<string> {
  const { id } = await a.api.organizationCreate({ body: { name: 'Pair', slug: `pair-${Date.now().toString(36)}-${(n += 1)}` } });
  await a.api.memberAdd({ path: { id }, body: { user_id: b.userId, role: 'owner' } });
  return id;
}

/** Sends both requests while the test holds the organization's lock, then releases it. */
async function overlapping<T>(organizationId: string, requests: (() => Promise<T>)[]): Promise<T[]> {
  let results: Promise<T[]> | undefined;
  await app.sql.begin(async (tx) => {
    await tx`select 1 from organizations where id = ${organizationId} for update`;
    results = Promise.all(requests.map((r) => r()));
    // Long enough for both to reach the lock and wait on it.
    await sleep(300);
  });
  return results!;
}

const owners = async (organizationId: string) =>
  (
    await app.sql<{ user_id: string }[]>`
      select user_id from organization_members where organization_id = ${organizationId} and role = 'owner'`
  ).map((r) => r.user_id);

const RUNS = [1, 2, 3, 4, 5];

describe('the last two Owners, concurrently', () => {
  it.each(RUNS)('each demoting themselves leaves exactly one Owner; the other is 422 last-owner (run %i)', async () => {
    const id = await twoOwners();
    const results = await overlapping(id, [
      () => outcome(a.api.memberUpdate({ path: { id, user_id: a.userId }, body: { role: 'admin' } })),
      () => outcome(b.api.memberUpdate({ path: { id, user_id: b.userId }, body: { role: 'admin' } })),
    ]);
    expect(results.filter((r) => r === 'ok')).toHaveLength(1);
    expect(results.filter((r) => r !== 'ok')).toEqual([[422, 'last-owner']]);
    const left = await owners(id);
    expect(left).toEqual([results[0] === 'ok' ? b.userId : a.userId]);
    expect(await app.sql`select 1 from audit_entries where organization_id = ${id} and action = 'member.role_changed'`).toHaveLength(1);
  });

  it.each(RUNS)('each removing themselves leaves exactly one Owner; the other is 422 last-owner (run %i)', async () => {
    const id = await twoOwners();
    const results = await overlapping(id, [
      () => outcome(a.api.memberRemove({ path: { id, user_id: a.userId } })),
      () => outcome(b.api.memberRemove({ path: { id, user_id: b.userId } })),
    ]);
    expect(results.filter((r) => r === 'ok')).toHaveLength(1);
    expect(results.filter((r) => r !== 'ok')).toEqual([[422, 'last-owner']]);
    expect(await owners(id)).toHaveLength(1);
    expect(await app.sql`select 1 from organization_members where organization_id = ${id}`).toHaveLength(1);
  });

  it.each(RUNS)('each demoting the other: the second is decided on its caller\'s role after the first (run %i)', async () => {
    const id = await twoOwners();
    const results = await overlapping(id, [
      () => outcome(a.api.memberUpdate({ path: { id, user_id: b.userId }, body: { role: 'member' } })),
      () => outcome(b.api.memberUpdate({ path: { id, user_id: a.userId }, body: { role: 'member' } })),
    ]);
    // The loser is a plain member when its turn comes: its request is refused for what it now is
    // (not decided on the role it had when it started waiting, which would end in 422 last-owner).
    expect(results.filter((r) => r === 'ok')).toHaveLength(1);
    expect(results.filter((r) => r !== 'ok')).toEqual([[403, 'forbidden']]);
    expect(await owners(id)).toHaveLength(1);
  });

  it.each(RUNS)('removing the other while being removed: the removed caller can no longer act (run %i)', async () => {
    const id = await twoOwners();
    const results = await overlapping(id, [
      () => outcome(a.api.memberRemove({ path: { id, user_id: b.userId } })),
      () => outcome(b.api.memberRemove({ path: { id, user_id: a.userId } })),
    ]);
    expect(results.filter((r) => r === 'ok')).toHaveLength(1);
    // The loser is no longer a member: the organization is hidden from it.
    expect(results.filter((r) => r !== 'ok')).toEqual([[404, 'not-found']]);
    expect(await owners(id)).toHaveLength(1);
  });
});
