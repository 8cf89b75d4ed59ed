// An application acting as a user (DECISIONS.md §3 "Application token", §4 "Delegations"): its token
// with `X-Acting-As-User` works for a user who holds a live delegation to it, with the delegation's
// capabilities intersected with the user's own role, never with staff power, and never on session-only,
// admin or application-only routes. Audit entries name the application and the user it acted as.
import { randomUUID } from 'node:crypto';
import type { SvcClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { outcome, refusal } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import {
  countOf,
  delegationsOf,
  person,
  personalToken,
  registerApplication,
  staff,
  teamOrganization,
  type Application,
  type Person,
  type Staff,
} from '../applications/fixtures.js';

let app: TestApp;
let smtp: TestSmtp;
let registrar: Staff;
/** Holds users.read.public as itself, so its reads are refused while acting as only for the caller kind. */
let panel: Application;
/** Staff (manage_users) who delegated to the panel; admin of `adminOf`, plain member of `memberOf`. */
let user: Person;
let bystander: Person;
let adminOf: string, memberOf: string;
let as: SvcClient;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  registrar = await staff(app, smtp, 'registrar', ['manage_applications']);
  panel = await registerApplication(app, registrar, ['users.read.public'], 'Game panel');
  [user, bystander] = await Promise.all([person(app, smtp, 'delegator'), person(app, smtp, 'bystander')]);
  await app.sql`update users set system_permissions = '{manage_users}' where id = ${user.id}`;
  adminOf = await teamOrganization(app, [
    [bystander.id, 'owner'],
    [user.id, 'admin'],
  ]);
  memberOf = await teamOrganization(app, [
    [bystander.id, 'owner'],
    [user.id, 'member'],
  ]);
  await user.api.meDelegationGrant({
    body: { application_id: panel.id, capabilities: ['me.read', 'organizations.read', 'projects.manage'] },
  });
  as = panel.api.actingAs(user.id);
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

/** Status, code and detail: the detail tells which check refused (the kind, the delegation, the role). */
const why = async (p: Promise<unknown>) => {
  const e = await refusal(p);
  return [e.status, e.code, e.detail];
};
const KIND_REFUSED = expect.stringMatching(/acting as a user may not call/);
const NO_DELEGATION = expect.stringMatching(/no live delegation/);

const projectCount = async (organizationId: string) => {
  const [row] = await app.sql<
    { n: number }[]
  >`select count(*)::int as n from projects where organization_id = ${organizationId}`;
  return row!.n;
};

let counter = 0;
const newProject = () => ({ name: 'Made by the panel', slug: `panel-${(counter += 1)}`, description: null });

describe('within the delegation', () => {
  it('answers GET /me as the user, with no system permissions even though the user is staff', async () => {
    expect((await user.api.meGet()).system_permissions).toEqual(['manage_users']);
    const me = await as.meGet();
    expect(me).toMatchObject({ id: user.id, system_permissions: [] });
  });

  it("lists the user's organizations", async () => {
    const ids = (list: { id: string }[]) => list.map((o) => o.id).sort();
    const mine = await user.api.organizationList();
    expect(ids(mine)).toEqual(expect.arrayContaining([adminOf, memberOf].sort()));
    expect(ids(await as.organizationList())).toEqual(ids(mine));
  });

  it('creates a project where the user is admin; the audit entry names the application and the user', async () => {
    const project = await as.projectCreate({ path: { id: adminOf }, body: newProject() });
    expect(project.organization_id).toBe(adminOf);
    const { data } = await user.api.organizationAuditList({
      path: { id: adminOf },
      query: { action: 'project.created' },
    });
    expect(data.filter((e) => e.target.id === project.id).map((e) => e.actor)).toEqual([
      { user_id: null, token_id: null, application_id: panel.id, acting_as_user_id: user.id },
    ]);
  });
});

describe('outside it', () => {
  it('refuses an operation the delegation does not name, though the user could (403 forbidden)', async () => {
    const newcomer = await person(app, smtp, 'newcomer');
    const before = await countOf(app, 'organization_members');
    expect(
      await why(as.memberAdd({ path: { id: adminOf }, body: { user_id: newcomer.id, role: 'member' } })),
    ).toEqual([403, 'forbidden', expect.stringMatching(/delegation lacks the members\.manage/)]);
    expect(await countOf(app, 'organization_members')).toBe(before);
  });

  it("refuses what the user's role forbids: a project in an organization where the user is a plain member", async () => {
    const before = await projectCount(memberOf);
    expect(await why(as.projectCreate({ path: { id: memberOf }, body: newProject() }))).toEqual([
      403,
      'forbidden',
      expect.stringMatching(/role \(member\)/),
    ]);
    expect(await projectCount(memberOf)).toBe(before);
  });

  it('refuses session-only operations: minting an API token, granting a delegation', async () => {
    const delegations = await delegationsOf(app, user.id);
    const tokens = await countOf(app, 'api_tokens');
    expect(
      await outcome(
        as.meApiTokenCreate({
          body: {
            name: 'stolen',
            authorization: { grants: [{ capability: 'me.read', scope: { kind: 'all' } }] },
          },
        }),
      ),
    ).toEqual([403, 'forbidden']);
    const other = await registerApplication(app, registrar);
    expect(
      await outcome(as.meDelegationGrant({ body: { application_id: other.id, capabilities: ['me.read'] } })),
    ).toEqual([403, 'forbidden']);
    expect(await why(as.meDelegationList())).toEqual([403, 'forbidden', KIND_REFUSED]);
    expect(await countOf(app, 'api_tokens')).toBe(tokens);
    expect(await delegationsOf(app, user.id)).toEqual(delegations);
  });

  it('refuses admin routes, whatever the user holds', async () => {
    const applications = await countOf(app, 'applications');
    expect(
      await outcome(
        as.adminUserPermissionsSet({ path: { id: bystander.id }, body: { permissions: ['manage_users'] } }),
      ),
    ).toEqual([403, 'forbidden']);
    expect(await why(as.adminApplicationCreate({ body: { name: 'Sneaky', capabilities: [] } }))).toEqual([
      403,
      'forbidden',
      KIND_REFUSED,
    ]);
    const [row] = await app.sql<
      { p: string[] }[]
    >`select system_permissions as p from users where id = ${bystander.id}`;
    expect(row!.p).toEqual([]);
    expect(await countOf(app, 'applications')).toBe(applications);
  });

  it('refuses the application reads, which the application may make only as itself', async () => {
    expect(await outcome(panel.api.applicationUserGet({ path: { id: user.id } }))).toBe('ok');
    expect(await why(as.applicationUserGet({ path: { id: user.id } }))).toEqual([
      403,
      'forbidden',
      KIND_REFUSED,
    ]);
    expect(await why(as.applicationUsersLookup({ body: { ids: [user.id] } }))).toEqual([
      403,
      'forbidden',
      KIND_REFUSED,
    ]);
  });
});

describe('without a live delegation', () => {
  it('refuses a user who never delegated, an unknown user id and a revoked delegation (403 forbidden)', async () => {
    const never = await person(app, smtp, 'never');
    expect(await outcome(panel.api.actingAs(never.id).meGet())).toEqual([403, 'forbidden']);
    expect(await why(panel.api.actingAs(randomUUID()).meGet())).toEqual([403, 'forbidden', NO_DELEGATION]);
    // A delegation to another application does not count for this one.
    const other = await registerApplication(app, registrar);
    await never.api.meDelegationGrant({ body: { application_id: other.id, capabilities: ['me.read'] } });
    expect(await outcome(panel.api.actingAs(never.id).meGet())).toEqual([403, 'forbidden']);
    expect(await outcome(other.api.actingAs(never.id).meGet())).toBe('ok');

    const revoker = await person(app, smtp, 'revoker');
    const organization = await teamOrganization(app, [[revoker.id, 'owner']]);
    await revoker.api.meDelegationGrant({
      body: { application_id: panel.id, capabilities: ['me.read', 'projects.manage'] },
    });
    const asRevoker = panel.api.actingAs(revoker.id);
    expect(await outcome(asRevoker.meGet())).toBe('ok');
    const [delegation] = await delegationsOf(app, revoker.id);
    await revoker.api.meDelegationRevoke({ path: { delegation_id: delegation!.id } });
    expect(await why(asRevoker.meGet())).toEqual([403, 'forbidden', NO_DELEGATION]);
    expect(
      await outcome(asRevoker.projectCreate({ path: { id: organization }, body: newProject() })),
    ).toEqual([403, 'forbidden']);
    expect(await projectCount(organization)).toBe(0);
  });
});

describe('the X-Acting-As-User header', () => {
  it('is refused with 400 when it is no uuid, or comes with a session or a personal API token', async () => {
    const token = await personalToken(app, user, ['me.read', 'projects.manage']);
    const cases = {
      'not a uuid': panel.api.actingAs('not-a-uuid'),
      'session token': user.api.actingAs(user.id),
      'personal API token': token.api.actingAs(user.id),
    };
    for (const [name, api] of Object.entries(cases)) {
      const e = await refusal(api.meGet());
      expect([name, e.status, e.code, e.errors[0]?.location]).toEqual([
        name,
        400,
        'invalid-field-value',
        'header',
      ]);
      // Nor does a write go through with it.
      const before = await projectCount(adminOf);
      expect(await outcome(api.projectCreate({ path: { id: adminOf }, body: newProject() }))).toEqual([
        400,
        'invalid-field-value',
      ]);
      expect(await projectCount(adminOf)).toBe(before);
    }
  });
});

describe("the delegation's last use", () => {
  it('is set on the first acting-as request, then written at most once a minute', async () => {
    const u = await person(app, smtp, 'last-use');
    await u.api.meDelegationGrant({ body: { application_id: panel.id, capabilities: ['me.read'] } });
    const lastUse = async () => (await delegationsOf(app, u.id))[0]!.last_used_at;
    expect(await lastUse()).toBeNull();

    const first = app.clock.now();
    await panel.api.actingAs(u.id).meGet();
    expect(await lastUse()).toEqual(first);
    expect((await u.api.meDelegationList())[0]?.last_used_at).toBe(first.toISOString());

    app.clock.advance(59_000);
    await panel.api.actingAs(u.id).meGet();
    expect(await lastUse()).toEqual(first);

    app.clock.advance(1_000);
    await panel.api.actingAs(u.id).meGet();
    expect(await lastUse()).toEqual(app.clock.now());
  });
});
