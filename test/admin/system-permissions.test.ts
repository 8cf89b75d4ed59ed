// PUT /admin/users/{id}/system-permissions (DECISIONS.md §4): an elevated session of a user holding
// manage_users; everything else is refused and changes nothing.
import { randomUUID } from 'node:crypto';
import { createClient, type SvcClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { newAccount } from '../support/auth.js';
import { outcome } from '../support/refusal.js';
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

const client = (token?: string): SvcClient => createClient({ baseUrl: app.baseUrl, retries: 0, ...(token ? { token } : {}) });

async function person(tag: string, permissions: string[] = []) {
  const { session } = await newAccount(app, smtp, tag);
  if (permissions.length > 0) {
    await app.sql`update users set system_permissions = ${permissions}::text[] where id = ${session.user.id}`;
  }
  const plain = client(session.token);
  const { token } = await plain.sudoSetup({ body: { pin: '246813' } });
  return { id: session.user.id, plain, elevated: client(token) };
}

const permissionsOf = async (id: string) =>
  (await app.sql<{ p: string[] }[]>`select system_permissions as p from users where id = ${id}`)[0]!.p;

describe('PUT /admin/users/{id}/system-permissions', () => {
  it('lets an elevated manage_users holder set the whole set, in effect on the next request', async () => {
    const staff = await person('staff', ['manage_users']);
    const target = await person('target');
    const answer = await staff.elevated.adminUserPermissionsSet({
      path: { id: target.id },
      body: { permissions: ['manage_billing', 'view_all_orders'] },
    });
    expect(answer).toEqual({ user_id: target.id, system_permissions: ['view_all_orders', 'manage_billing'] });
    expect((await target.plain.meGet()).system_permissions).toEqual(['view_all_orders', 'manage_billing']);
    // The clock is frozen: move it, so the two events are ordered by their time.
    app.clock.advance(1000);
    await staff.elevated.adminUserPermissionsSet({ path: { id: target.id }, body: { permissions: [] } });
    expect((await target.plain.meGet()).system_permissions).toEqual([]);
    const events = await app.sql<{ action: string; details: { permissions: string[]; actor_user_id: string } }[]>`
      select action, details from platform_events where target_id = ${target.id} order by created_at, id`;
    expect(events.map((e) => e.details.permissions)).toEqual([['view_all_orders', 'manage_billing'], []]);
    expect(events.every((e) => e.action === 'staff.permissions_set' && e.details.actor_user_id === staff.id)).toBe(true);
  });

  it('refuses an anonymous caller, an un-elevated staff session and an elevated one without manage_users', async () => {
    const staff = await person('staff-plain', ['manage_users']);
    const other = await person('staff-other', ['manage_billing']);
    const target = await person('target-2');
    const body = { permissions: ['manage_users' as const] };
    expect(await outcome(client().adminUserPermissionsSet({ path: { id: target.id }, body }))).toEqual([401, 'unauthenticated']);
    expect(await outcome(staff.plain.adminUserPermissionsSet({ path: { id: target.id }, body }))).toEqual([403, 'elevation-required']);
    expect(await outcome(other.elevated.adminUserPermissionsSet({ path: { id: target.id }, body }))).toEqual([403, 'forbidden']);
    expect(await permissionsOf(target.id)).toEqual([]);
  });

  it('takes a revocation at once: a staff member who lost manage_users is refused on the next request', async () => {
    const a = await person('staff-a', ['manage_users']);
    const b = await person('staff-b', ['manage_users']);
    await a.elevated.adminUserPermissionsSet({ path: { id: b.id }, body: { permissions: [] } });
    expect(await outcome(b.elevated.adminUserPermissionsSet({ path: { id: a.id }, body: { permissions: [] } }))).toEqual([
      403,
      'forbidden',
    ]);
    expect(await permissionsOf(a.id)).toEqual(['manage_users']);
  });

  it('answers 404 for an unknown user and 400 for an unknown or repeated permission, changing nothing', async () => {
    const staff = await person('staff-404', ['manage_users']);
    const target = await person('target-400');
    expect(
      await outcome(staff.elevated.adminUserPermissionsSet({ path: { id: randomUUID() }, body: { permissions: [] } })),
    ).toEqual([404, 'not-found']);
    for (const permissions of [['root'], ['manage_users', 'manage_users']]) {
      expect(
        await outcome(staff.elevated.adminUserPermissionsSet({ path: { id: target.id }, body: { permissions: permissions as never } })),
      ).toEqual([400, 'invalid-request']);
    }
    expect(await permissionsOf(target.id)).toEqual([]);
  });
});
