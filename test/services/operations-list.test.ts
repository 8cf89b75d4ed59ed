// GET /service-instances/{id}/operations (DECISIONS.md §6 "More routes"): a service's operations newest
// first, paged as every list ({ data, meta }, DECISIONS.md §1), so a client that lost an operation's id
// finds it again. Read access as the other service reads; every refusal is the 404 of an unknown id.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '@svcplatform/sdk';
import { clientOf, staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { raw, signedIn, type Caller } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { awaitOperation, provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

type Operation = components['schemas']['Operation'];

let app: TestApp;
let smtp: TestSmtp;
let staff: Staff;
let owner: Caller;
let member: Caller;
let billing: Caller;
let friend: Caller;
let stranger: Caller;
let orgId: string;
let projectId: string;
let otherProjectId: string;
let vps: Provisioned;
let other: Provisioned;
let reinstallId: string;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  staff = await staffMember(app, smtp, 'ol-staff', ['manage_services']);
  [owner, member, billing, friend, stranger] = await Promise.all([
    signedIn(app, smtp, 'ol-owner'),
    signedIn(app, smtp, 'ol-member'),
    signedIn(app, smtp, 'ol-billing'),
    signedIn(app, smtp, 'ol-friend'),
    signedIn(app, smtp, 'ol-stranger'),
  ]);
  orgId = (
    await owner.api.organizationCreate({ body: { name: 'Ops', slug: `ops-${Date.now().toString(36)}` } })
  ).id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: member.userId, role: 'member' } });
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: billing.userId, role: 'billing' } });
  projectId = (await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Main', slug: 'main' } }))
    .id;
  otherProjectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Side', slug: 'side' } })
  ).id;
  [vps, other] = await Promise.all([
    provisionService(staff.elevated, { projectId, name: 'Box' }),
    provisionService(staff.elevated, { projectId: otherProjectId, name: 'Other box' }),
  ]);
  // A second, real operation on the same service, a minute later on the app's frozen clock: the
  // reinstall is newer than the provisioning.
  app.clock.advance(60_000);
  const accepted = await owner.api.vpsReinstall({
    path: { id: vps.serviceInstanceId, resource_id: vps.primaryResourceId },
    body: { confirm: true, os_image: 'debian-12' },
  });
  reinstallId = accepted.operation_id;
  expect((await awaitOperation(owner.api, vps.serviceInstanceId, reinstallId)).status).toBe('succeeded');
  await owner.api.serviceShareCreate({
    path: { id: vps.serviceInstanceId },
    body: { user_id: friend.userId },
  });
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const list = (
  c: Caller | { api: Caller['api'] },
  query: { page?: number; page_size?: number } = {},
  id = vps.serviceInstanceId,
) => c.api.serviceOperationList({ path: { id }, query });

const UNKNOWN: [number, string] = [404, 'not-found'];

describe('the list', () => {
  it('answers the operations newest first, each as the poll answers it, with the page meta', async () => {
    const page = await list(owner);
    expect(page.data.map((o) => [o.id, o.kind])).toEqual([
      [reinstallId, 'reinstall'],
      [vps.operationId, 'provision'],
    ]);
    expect(page.meta).toEqual({ page: 1, page_size: 20, total_items: 2, total_pages: 1 });
    for (const op of page.data) {
      expect(op).toEqual(
        await owner.api.serviceOperationGet({ path: { id: vps.serviceInstanceId, operation_id: op.id } }),
      );
    }
    // Another service's operations never appear.
    expect((await list(owner, {}, other.serviceInstanceId)).data.map((o) => o.id)).toEqual([
      other.operationId,
    ]);
  });

  it('pages through many, in a stable order for operations of the same instant', async () => {
    // Finished operations of earlier days, two of them made in the same instant.
    const base = new Date(app.clock.now().getTime() - 10 * 86_400_000);
    const instants = [0, 1, 2, 2, 3].map((d) => new Date(base.getTime() + d * 86_400_000));
    for (const at of instants) {
      await app.sql`
        insert into service_operations (id, service_instance_id, kind, status, created_at, updated_at, completed_at)
        values (${randomUUID()}, ${vps.serviceInstanceId}, 'reinstall', 'succeeded', ${at}, ${at}, ${at})`;
    }
    const expected = (
      await app.sql<{ id: string }[]>`
        select id from service_operations where service_instance_id = ${vps.serviceInstanceId}
        order by created_at desc, id desc`
    ).map((r) => r.id);
    expect(expected).toHaveLength(7);
    expect(expected.slice(0, 2)).toEqual([reinstallId, vps.operationId]);

    const seen: string[] = [];
    for (let p = 1; p <= 3; p += 1) {
      const page = await list(owner, { page: p, page_size: 3 });
      expect(page.meta).toEqual({ page: p, page_size: 3, total_items: 7, total_pages: 3 });
      seen.push(...page.data.map((o) => o.id));
    }
    expect(seen).toEqual(expected);
    // Page 0 reads as 1; a page beyond the end is empty and still counts them all.
    expect((await list(owner, { page: 0, page_size: 3 })).data.map((o) => o.id)).toEqual(
      expected.slice(0, 3),
    );
    expect(await list(owner, { page: 9, page_size: 3 })).toEqual({
      data: [],
      meta: { page: 9, page_size: 3, total_items: 7, total_pages: 3 },
    });
    // The SDK's paginator walks it.
    const walked: Operation[] = [];
    for await (const op of owner.api.paginate('serviceOperationList', {
      path: { id: vps.serviceInstanceId },
      query: { page_size: 2 },
    })) {
      walked.push(op);
    }
    expect(walked.map((o) => o.id)).toEqual(expected);
  });

  it('refuses a page size out of range (400 invalid-request)', async () => {
    expect(await outcome(list(owner, { page_size: 101 }))).toEqual([400, 'invalid-request']);
    expect(await outcome(list(owner, { page_size: 0 }))).toEqual([400, 'invalid-request']);
  });
});

describe('who may read it', () => {
  it('every member of the organization, whatever the role', async () => {
    for (const c of [owner, member, billing]) {
      expect((await list(c)).data[0]!.id).toBe(reinstallId);
    }
  });

  it('a stranger, a share holder and an unknown id get the same 404, body and all', async () => {
    const path = (id: string) => `/service-instances/${id}/operations`;
    const unknown = await raw(app, owner.token, 'GET', path(randomUUID()));
    expect(unknown.status).toBe(404);
    for (const c of [stranger, friend]) {
      expect(await outcome(list(c))).toEqual(UNKNOWN);
      expect(await raw(app, c.token, 'GET', path(vps.serviceInstanceId))).toEqual(unknown);
    }
    expect(await outcome(list(owner, {}, randomUUID()))).toEqual(UNKNOWN);
  });

  it("a token with services.read reaches it within its grant's scope, not another project's", async () => {
    const token = async (scope: { kind: 'project' | 'organization'; id: string }) =>
      clientOf(
        app,
        (
          await owner.api.meApiTokenCreate({
            body: { name: 'ops', authorization: { grants: [{ capability: 'services.read', scope }] } },
          })
        ).secret,
      );
    const inProject = await token({ kind: 'project', id: projectId });
    expect(
      (await inProject.serviceOperationList({ path: { id: vps.serviceInstanceId } })).meta.total_items,
    ).toBe(7);
    const inOrganization = await token({ kind: 'organization', id: orgId });
    expect(
      (await inOrganization.serviceOperationList({ path: { id: vps.serviceInstanceId } })).data,
    ).toHaveLength(7);
    const elsewhere = await token({ kind: 'project', id: otherProjectId });
    expect(await outcome(elsewhere.serviceOperationList({ path: { id: vps.serviceInstanceId } }))).toEqual(
      UNKNOWN,
    );
  });

  it('staff read it in their own session, never through a personal token', async () => {
    expect(
      (await staff.plain.serviceOperationList({ path: { id: vps.serviceInstanceId } })).meta.total_items,
    ).toBe(7);
    const { secret } = await staff.plain.meApiTokenCreate({
      body: {
        name: 'everything',
        authorization: { grants: [{ capability: 'services.read', scope: { kind: 'all' } }] },
      },
    });
    expect(
      await outcome(clientOf(app, secret).serviceOperationList({ path: { id: vps.serviceInstanceId } })),
    ).toEqual(UNKNOWN);
  });
});
