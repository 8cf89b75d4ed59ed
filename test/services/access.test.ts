// Who may see a service instance (document 2 §4 "Resources", §5; DECISIONS.md §4 shares): members of its
// organization read it, holders of a per-service share list its resources and nothing more, anyone else
// gets the 404 of an unknown id on every service-scoped route. And the primary mark of resource lists:
// at most one resource marked; two live primaries mark none and set the flag.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SvcClient } from '@svcplatform/sdk';
import { clientOf, staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { outcome, refusal } from '../support/refusal.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let owner: Caller;
let admin: Caller;
let member: Caller;
let billing: Caller;
let friend: Caller;
let stranger: Caller;
let orgId: string;
let projectId: string;
let otherProjectId: string;
let vps: Provisioned;
let staff: Staff;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  staff = await staffMember(app, smtp, 'acc-staff', ['manage_services']);
  [owner, admin, member, billing, friend, stranger] = await Promise.all([
    signedIn(app, smtp, 'acc-owner'),
    signedIn(app, smtp, 'acc-admin'),
    signedIn(app, smtp, 'acc-member'),
    signedIn(app, smtp, 'acc-billing'),
    signedIn(app, smtp, 'acc-friend'),
    signedIn(app, smtp, 'acc-stranger'),
  ]);
  orgId = (
    await owner.api.organizationCreate({
      body: { name: 'Shared', slug: `shared-${Date.now().toString(36)}` },
    })
  ).id;
  for (const [c, role] of [
    [admin, 'admin'],
    [member, 'member'],
    [billing, 'billing'],
  ] as const) {
    await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: c.userId, role } });
  }
  projectId = (await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Main', slug: 'main' } }))
    .id;
  otherProjectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Side', slug: 'side' } })
  ).id;
  vps = await provisionService(staff.elevated, { projectId, name: 'Shared box' });
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const id = () => ({ id: vps.serviceInstanceId });
const reads = (api: SvcClient) => ({
  service: () => api.serviceInstanceGet({ path: id() }),
  resources: () => api.serviceInstanceResourceList({ path: id() }),
  subscriptionResources: () => api.subscriptionResourceList({ path: { id: vps.subscriptionId } }),
  operation: () => api.serviceOperationGet({ path: { ...id(), operation_id: vps.operationId } }),
  shares: () => api.serviceShareList({ path: id() }),
  list: () => api.serviceInstanceList({ path: { id: projectId } }),
});

/** What an unknown service answers, to compare every refusal with. */
const UNKNOWN: [number, string] = [404, 'not-found'];

const shareRows = async () =>
  (
    await app.sql<
      { user_id: string }[]
    >`select user_id from service_shares where service_instance_id = ${vps.serviceInstanceId} order by user_id`
  ).map((r) => r.user_id);

describe('members', () => {
  it.each(['owner', 'admin', 'member', 'billing'] as const)(
    '%s reads the service, its resources and operations',
    async (who) => {
      const c = { owner, admin, member, billing }[who];
      const r = reads(c.api);
      expect((await r.service()).id).toBe(vps.serviceInstanceId);
      expect((await r.resources()).resources).toHaveLength(2);
      expect((await r.subscriptionResources()).service_instance.id).toBe(vps.serviceInstanceId);
      expect((await r.operation()).status).toBe('succeeded');
      expect((await r.list()).map((s) => s.id)).toEqual([vps.serviceInstanceId]);
    },
  );

  it('an unknown id and a stranger answer the same 404, on every route', async () => {
    expect(await outcome(owner.api.serviceInstanceGet({ path: { id: randomUUID() } }))).toEqual(UNKNOWN);
    expect(await outcome(owner.api.subscriptionResourceList({ path: { id: randomUUID() } }))).toEqual(
      UNKNOWN,
    );
    for (const read of Object.values(reads(stranger.api))) expect(await outcome(read())).toEqual(UNKNOWN);
  });

  it("a token reaches the service through a grant of its project or organization, not another project's", async () => {
    const token = async (scope: { kind: 'project' | 'organization'; id: string }) =>
      clientOf(
        app,
        (
          await owner.api.meApiTokenCreate({
            body: { name: 'svc', authorization: { grants: [{ capability: 'services.read', scope }] } },
          })
        ).secret,
      );
    expect(
      (await (await token({ kind: 'project', id: projectId })).serviceInstanceGet({ path: id() })).id,
    ).toBe(vps.serviceInstanceId);
    expect(
      (await (await token({ kind: 'organization', id: orgId })).serviceInstanceGet({ path: id() })).id,
    ).toBe(vps.serviceInstanceId);
    const elsewhere = await token({ kind: 'project', id: otherProjectId });
    expect(await outcome(elsewhere.serviceInstanceGet({ path: id() }))).toEqual(UNKNOWN);
    expect(await outcome(elsewhere.serviceInstanceResourceList({ path: id() }))).toEqual(UNKNOWN);
  });
});

it('an unknown operation of a readable service names the operation; of an unreadable one, the service', async () => {
  const detail = async (p: Promise<unknown>) => {
    const e = await refusal(p);
    return [e.status, e.code, e.detail];
  };
  const unknownService = await detail(owner.api.serviceInstanceGet({ path: { id: randomUUID() } }));
  expect(unknownService).toEqual([404, 'not-found', 'No such service instance.']);
  const path = { ...id(), operation_id: randomUUID() };
  expect(await detail(owner.api.serviceOperationGet({ path }))).toEqual([
    404,
    'not-found',
    'No such operation of this service.',
  ]);
  expect(await detail(stranger.api.serviceOperationGet({ path }))).toEqual(unknownService);
  // The stranger learns nothing from a real operation id either.
  expect(
    await detail(stranger.api.serviceOperationGet({ path: { ...id(), operation_id: vps.operationId } })),
  ).toEqual(unknownService);
});

describe('staff', () => {
  it('read every service in their session, never through a personal token or a delegation', async () => {
    expect((await staff.plain.serviceInstanceGet({ path: id() })).id).toBe(vps.serviceInstanceId);
    expect(
      (await staff.plain.serviceOperationGet({ path: { ...id(), operation_id: vps.operationId } })).kind,
    ).toBe('provision');
    const { secret } = await staff.plain.meApiTokenCreate({
      body: {
        name: 'everything',
        authorization: { grants: [{ capability: 'services.read', scope: { kind: 'all' } }] },
      },
    });
    const token = clientOf(app, secret);
    expect(await outcome(token.serviceInstanceGet({ path: id() }))).toEqual(UNKNOWN);
    expect(
      await outcome(token.serviceOperationGet({ path: { ...id(), operation_id: vps.operationId } })),
    ).toEqual(UNKNOWN);
  });
});

describe('shares', () => {
  it('owners and admins share; the holder lists resources and nothing more', async () => {
    const made = await owner.api.serviceShareCreate({ path: id(), body: { user_id: friend.userId } });
    expect(made).toMatchObject({ service_instance_id: vps.serviceInstanceId, user_id: friend.userId });
    // Sharing again answers the share (200, the same one).
    const again = await admin.api.serviceShareCreate({ path: id(), body: { user_id: friend.userId } });
    expect(again).toEqual(made);
    expect((await admin.api.serviceShareList({ path: id() })).map((s) => s.user_id)).toEqual([friend.userId]);

    const r = reads(friend.api);
    expect((await r.resources()).resources.map((x) => x.kind)).toEqual(['virtual_machine', 'volume']);
    expect((await r.subscriptionResources()).service_instance.name).toBe('Shared box');
    expect(await outcome(r.service())).toEqual(UNKNOWN);
    expect(await outcome(r.operation())).toEqual(UNKNOWN);
    expect(await outcome(r.shares())).toEqual(UNKNOWN);
    expect(await outcome(r.list())).toEqual(UNKNOWN);
    expect(
      await outcome(
        friend.api.vpsReinstall({
          path: { ...id(), resource_id: vps.primaryResourceId },
          body: { confirm: true, os_image: 'debian-12' },
        }),
      ),
    ).toEqual(UNKNOWN);
    const actions = (await auditEntries(app, orgId)).map((e) => e.action);
    expect(actions.filter((a) => a === 'service.shared')).toHaveLength(1);
  });

  it('members and billing may not manage shares (the 404 of an unknown id), and nothing changes', async () => {
    const before = await shareRows();
    for (const c of [member, billing, friend, stranger]) {
      expect(
        await outcome(c.api.serviceShareCreate({ path: id(), body: { user_id: stranger.userId } })),
      ).toEqual(UNKNOWN);
      expect(await outcome(c.api.serviceShareDelete({ path: { ...id(), user_id: friend.userId } }))).toEqual(
        UNKNOWN,
      );
      expect(await outcome(c.api.serviceShareList({ path: id() }))).toEqual(UNKNOWN);
    }
    expect(await shareRows()).toEqual(before);
  });

  it('an unknown user is 404 and shares nothing', async () => {
    const before = await shareRows();
    expect(
      await outcome(owner.api.serviceShareCreate({ path: id(), body: { user_id: randomUUID() } })),
    ).toEqual(UNKNOWN);
    expect(await shareRows()).toEqual(before);
  });

  it('taking a share back ends the access; taking it back twice is 404', async () => {
    await admin.api.serviceShareDelete({ path: { ...id(), user_id: friend.userId } });
    expect(await shareRows()).toEqual([]);
    expect(await outcome(reads(friend.api).resources())).toEqual(UNKNOWN);
    expect(
      await outcome(owner.api.serviceShareDelete({ path: { ...id(), user_id: friend.userId } })),
    ).toEqual(UNKNOWN);
    expect((await auditEntries(app, orgId)).some((e) => e.action === 'service.unshared')).toBe(true);
  });
});

describe('the primary mark', () => {
  it('marks the one live primary; two live primaries mark none and set primary_role_is_inconsistent', async () => {
    const listed = async () => [
      await owner.api.serviceInstanceResourceList({ path: id() }),
      await owner.api.subscriptionResourceList({ path: { id: vps.subscriptionId } }),
    ];
    for (const list of await listed()) {
      expect(list.primary_role_is_inconsistent).toBe(false);
      expect(list.resources.filter((r) => r.is_declared_primary).map((r) => r.id)).toEqual([
        vps.primaryResourceId,
      ]);
    }
    // A second live resource with the primary role (an inconsistency staff tooling could leave behind).
    const second = randomUUID();
    const now = app.clock.now();
    await app.sql`
      insert into service_resources (id, service_instance_id, kind, role, status, created_at, updated_at)
      values (${second}, ${vps.serviceInstanceId}, 'workload', 'primary', 'running', ${now}, ${now})`;
    for (const list of await listed()) {
      expect(list.primary_role_is_inconsistent).toBe(true);
      expect(list.resources.filter((r) => r.is_declared_primary)).toEqual([]);
      expect(list.resources.filter((r) => r.role === 'primary')).toHaveLength(2);
    }
    // Once one of them is gone (deleted, not live), the other is marked again.
    await app.sql`update service_resources set deleted_at = ${now} where id = ${second}`;
    for (const list of await listed()) {
      expect(list.primary_role_is_inconsistent).toBe(false);
      expect(list.resources.filter((r) => r.is_declared_primary).map((r) => r.id)).toEqual([
        vps.primaryResourceId,
      ]);
    }
  });
});
