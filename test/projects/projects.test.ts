// Projects (seed document 1, "Project", "Projects", "Authentication" anti-enumeration, "Errors"): who
// may read and write them, the personal organization's managed games project, slugs, and the audit
// entry of every write.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { outcome, refusal } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import {
  auditOf,
  insertSubscription,
  personalOrganization,
  projectRow,
  signedIn,
  teamOrganization,
  type Caller,
  type CreateBody,
  type Project,
} from './fixtures.js';

let app: TestApp;
let smtp: TestSmtp;
/** The team's owner, admin, billing and plain member, and someone in none of its organizations. */
let owner: Caller, admin: Caller, billing: Caller, member: Caller, outsider: Caller;
let team: string;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  [owner, admin, billing, member, outsider] = (await Promise.all(
    ['owner', 'admin', 'billing', 'member', 'outsider'].map((tag) => signedIn(app, smtp, tag)),
  )) as [Caller, Caller, Caller, Caller, Caller];
  team = await teamOrganization(app, [
    [owner.userId, 'owner'],
    [admin.userId, 'admin'],
    [billing.userId, 'billing'],
    [member.userId, 'member'],
  ]);
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

let counter = 0;
const slug = (tag = 'p') => `${tag}-${(counter += 1)}`;

// The SDK's type makes `description` required (it has a default); the server takes it omitted too.
const create = (
  by: Caller,
  organizationId: string,
  body: { name?: string; slug?: string; description?: string | null } = {},
) =>
  by.api.projectCreate({
    path: { id: organizationId },
    body: { name: 'A project', slug: slug(), ...body } as CreateBody,
  });

const projectCount = async (organizationId: string) => {
  const [row] = await app.sql<
    { n: number }[]
  >`select count(*)::int as n from projects where organization_id = ${organizationId}`;
  return row!.n;
};

describe('the personal organization', () => {
  it('holds the managed games project from signup, which cannot be changed or deleted', async () => {
    const me = await signedIn(app, smtp, 'personal');
    const personal = await personalOrganization(app, me.userId);
    const projects = await me.api.projectList();
    expect(projects).toEqual([
      {
        id: expect.any(String),
        organization_id: personal,
        name: 'Games',
        slug: 'games',
        description: null,
        created_at: expect.stringMatching(/Z$/),
        updated_at: expect.stringMatching(/Z$/),
        managed: true,
      },
    ]);
    const games = projects[0]!;
    expect(await me.api.projectGetBySlug({ path: { id: personal, slug: 'games' } })).toEqual(games);
    const before = await projectRow(app, games.id);

    for (const body of [{ name: 'Renamed' }, { slug: 'other' }, { description: 'mine now' }, {}]) {
      expect(await outcome(me.api.projectUpdate({ path: { id: games.id }, body }))).toEqual([
        403,
        'project-gaming-managed',
      ]);
    }
    expect(await outcome(me.api.projectDelete({ path: { id: games.id } }))).toEqual([
      403,
      'project-gaming-managed',
    ]);
    expect(await projectRow(app, games.id)).toEqual(before);
    expect(await auditOf(app, games.id)).toEqual([]);
    // Checked after membership: to anyone else the managed project is just absent.
    expect(
      await outcome(outsider.api.projectUpdate({ path: { id: games.id }, body: { name: 'x' } })),
    ).toEqual([404, 'not-found']);
    expect(await outcome(outsider.api.projectDelete({ path: { id: games.id } }))).toEqual([404, 'not-found']);
  });

  it('reserves the slug games, for new projects and for renames', async () => {
    const me = await signedIn(app, smtp, 'reserved');
    const personal = await personalOrganization(app, me.userId);
    const err = await refusal(create(me, personal, { slug: 'games' }));
    expect([err.status, err.code]).toEqual([422, 'project-slug-reserved']);
    expect(await projectCount(personal)).toBe(1);

    const mine = await create(me, personal, { name: 'Sites', slug: 'sites' });
    expect(mine).toMatchObject({ organization_id: personal, slug: 'sites', managed: false });
    const before = await projectRow(app, mine.id);
    expect(
      await outcome(
        me.api.projectUpdate({ path: { id: mine.id }, body: { slug: 'games', name: 'Games 2' } }),
      ),
    ).toEqual([422, 'project-slug-reserved']);
    expect(await projectRow(app, mine.id)).toEqual(before);
    expect((await auditOf(app, mine.id)).map((e) => e.action)).toEqual(['project.created']);
  });

  it('reserves nothing in a team organization: games there is an ordinary project', async () => {
    const games = await create(owner, team, { name: 'Games', slug: 'games' });
    expect(games.managed).toBe(false);
    const renamed = await owner.api.projectUpdate({ path: { id: games.id }, body: { name: 'Our games' } });
    expect(renamed.name).toBe('Our games');
    await owner.api.projectDelete({ path: { id: games.id } });
    expect(await projectRow(app, games.id)).toBeUndefined();
  });
});

describe('POST /organizations/{id}/projects', () => {
  it('creates the project and records project.created in the same transaction', async () => {
    const s = slug('new');
    const project = await owner.api.projectCreate({
      path: { id: team },
      body: { name: '  Web shop  ', slug: s, description: 'The storefront' },
    });
    const requestId = owner.lastRequestId();
    expect(requestId).toMatch(/\S/);
    const now = app.clock.now().toISOString();
    expect(project).toEqual({
      id: expect.any(String),
      organization_id: team,
      name: 'Web shop',
      slug: s,
      description: 'The storefront',
      created_at: now,
      updated_at: now,
      managed: false,
    });
    expect(await owner.api.projectGet({ path: { id: project.id } })).toEqual(project);
    expect(await member.api.projectGetBySlug({ path: { id: team, slug: s } })).toEqual(project);
    expect(await billing.api.organizationProjectList({ path: { id: team } })).toContainEqual(project);
    expect(await admin.api.projectList()).toContainEqual(project);

    expect(await auditOf(app, project.id)).toEqual([
      {
        organization_id: team,
        action: 'project.created',
        actor_user_id: owner.userId,
        target_type: 'project',
        target_id: project.id,
        project_id: project.id,
        request_id: requestId,
        created_at: app.clock.now(),
      },
    ]);
  });

  it('takes no description as null', async () => {
    expect((await create(owner, team, { description: undefined })).description).toBeNull();
    expect((await create(owner, team, { description: null })).description).toBeNull();
  });

  it('lets an admin create; billing and member roles are refused with 403 forbidden, creating nothing', async () => {
    const byAdmin = await create(admin, team);
    expect((await auditOf(app, byAdmin.id))[0]?.actor_user_id).toBe(admin.userId);
    const before = await projectCount(team);
    for (const caller of [billing, member]) {
      const s = slug('refused');
      expect(await outcome(create(caller, team, { slug: s }))).toEqual([403, 'forbidden']);
      const [row] = await app.sql`select id from projects where organization_id = ${team} and slug = ${s}`;
      expect(row).toBeUndefined();
    }
    expect(await projectCount(team)).toBe(before);
  });

  it('refuses a slug taken in the organization with 409 slug-taken; another organization may use it', async () => {
    const first = await create(owner, team, { slug: 'taken' });
    const before = await projectCount(team);
    const err = await refusal(create(owner, team, { slug: 'taken', name: 'Second' }));
    expect([err.status, err.code]).toEqual([409, 'slug-taken']);
    expect(await projectCount(team)).toBe(before);
    expect(await projectRow(app, first.id)).toMatchObject({ name: 'A project', slug: 'taken' });

    const other = await teamOrganization(app, [[owner.userId, 'owner']], 'Other team');
    expect((await create(owner, other, { slug: 'taken' })).slug).toBe('taken');
  });

  it('makes one project of 8 concurrent creates of one slug', async () => {
    const org = await teamOrganization(app, [[owner.userId, 'owner']], 'Race');
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        outcome(create(owner, org, { slug: 'contested', name: `Racer ${i}` })),
      ),
    );
    expect(results.filter((r) => r === 'ok')).toHaveLength(1);
    expect(results.filter((r) => r !== 'ok')).toEqual(Array.from({ length: 7 }, () => [409, 'slug-taken']));
    expect(await projectCount(org)).toBe(1);
    const [audit] = await app.sql<{ n: number }[]>`
      select count(*)::int as n from audit_entries where organization_id = ${org} and action = 'project.created'`;
    expect(audit!.n).toBe(1);
  });

  it('refuses a blank name (400 invalid-field-value) and a malformed slug or unknown field (400 invalid-request)', async () => {
    const before = await projectCount(team);
    const blank = await refusal(create(owner, team, { name: '   ' }));
    expect([blank.status, blank.code, blank.errors[0]?.pointer]).toEqual([
      400,
      'invalid-field-value',
      '/name',
    ]);
    for (const s of ['Upper', 'a--b', '-a', 'x', 'a_b']) {
      expect(await outcome(create(owner, team, { slug: s }))).toEqual([400, 'invalid-request']);
    }
    expect(
      await outcome(
        owner.api.projectCreate({
          path: { id: team },
          body: { name: 'x', slug: slug(), managed: true } as never,
        }),
      ),
    ).toEqual([400, 'invalid-request']);
    expect(await projectCount(team)).toBe(before);
  });
});

describe('reads', () => {
  it('GET /projects lists every organization of the caller: personal first, then organizations by name, then projects by name', async () => {
    const me = await signedIn(app, smtp, 'lister');
    const zulu = await teamOrganization(app, [[me.userId, 'member']], 'Zulu');
    const alpha = await teamOrganization(app, [[me.userId, 'owner']], 'Alpha');
    const personal = await personalOrganization(app, me.userId);
    for (const [org, name] of [
      [zulu, 'beta'],
      [zulu, 'Alpha'],
      [zulu, 'alpha two'],
      [alpha, 'zeta'],
      [alpha, 'eta'],
      [personal, 'Apps'],
    ] as const) {
      await app.sql`
        insert into projects (id, organization_id, name, slug, created_at, updated_at)
        values (${randomUUID()}, ${org}, ${name}, ${slug()}, now(), now())`;
    }
    // Someone else's organization stays out.
    await create(outsider, await personalOrganization(app, outsider.userId));
    const listed = (await me.api.projectList()).map((p) => [p.organization_id, p.name]);
    expect(listed).toEqual([
      [personal, 'Apps'],
      [personal, 'Games'],
      [alpha, 'eta'],
      [alpha, 'zeta'],
      [zulu, 'Alpha'],
      [zulu, 'alpha two'],
      [zulu, 'beta'],
    ]);
    expect((await me.api.organizationProjectList({ path: { id: alpha } })).map((p) => p.name)).toEqual([
      'eta',
      'zeta',
    ]);
  });

  it('answers an unknown slug in a readable organization with 404 No such project.', async () => {
    const err = await refusal(member.api.projectGetBySlug({ path: { id: team, slug: 'never-made' } }));
    expect([err.status, err.code, err.detail]).toEqual([404, 'not-found', 'No such project.']);
  });
});

describe('anti-enumeration: a stranger sees what an unknown id shows', () => {
  let theirs: Project;
  beforeAll(async () => {
    theirs = await create(owner, team, { slug: 'secret' });
  });

  /** Status, headers (but the date) and body, byte for byte. */
  const answer = async (res: Response) => ({
    status: res.status,
    headers: [...res.headers].filter(([k]) => k !== 'date'),
    body: await res.text(),
  });
  const same = { 'x-request-id': 'same-request' };

  it.each([
    ['GET', (id: string) => `/projects/${id}`, undefined],
    ['PATCH', (id: string) => `/projects/${id}`, { name: 'Mine now' }],
    ['DELETE', (id: string) => `/projects/${id}`, undefined],
    ['GET', (id: string) => `/projects/${id}/stats`, undefined],
  ])(
    '%s %s of a project of another organization is the 404 of an unknown project',
    async (method, path, body) => {
      const before = await projectRow(app, theirs.id);
      const hidden = await answer(await outsider.raw(method, path(theirs.id), { body, headers: same }));
      const absent = await answer(await outsider.raw(method, path(randomUUID()), { body, headers: same }));
      expect(hidden.status).toBe(404);
      expect(JSON.parse(hidden.body)).toMatchObject({ code: 'not-found', detail: 'No such project.' });
      expect(hidden).toEqual(absent);
      expect(await projectRow(app, theirs.id)).toEqual(before);
    },
  );

  it.each([
    ['GET', (id: string) => `/organizations/${id}/projects`, undefined],
    ['POST', (id: string) => `/organizations/${id}/projects`, { name: 'Mine', slug: 'intruder' }],
    ['GET', (id: string) => `/organizations/${id}/projects/by-slug/secret`, undefined],
  ])('%s %s of another organization is the 404 of an unknown organization', async (method, path, body) => {
    const before = await projectCount(team);
    const hidden = await answer(await outsider.raw(method, path(team), { body, headers: same }));
    const absent = await answer(await outsider.raw(method, path(randomUUID()), { body, headers: same }));
    expect(hidden.status).toBe(404);
    expect(JSON.parse(hidden.body)).toMatchObject({ code: 'not-found', detail: 'No such organization.' });
    expect(hidden).toEqual(absent);
    expect(await projectCount(team)).toBe(before);
  });

  it('lists none of them in GET /projects', async () => {
    expect((await outsider.api.projectList()).map((p) => p.organization_id)).not.toContain(team);
  });
});

describe('PATCH /projects/{id}', () => {
  it('changes only the fields given; description null clears it; records project.updated', async () => {
    const project = await create(owner, team, { name: 'Blog', description: 'Words' });
    app.clock.advance(60_000);
    const renamed = await owner.api.projectUpdate({ path: { id: project.id }, body: { name: 'Journal' } });
    expect(renamed).toEqual({ ...project, name: 'Journal', updated_at: app.clock.now().toISOString() });
    const renameRequest = owner.lastRequestId();

    app.clock.advance(60_000);
    const s = slug('moved');
    const moved = await admin.api.projectUpdate({
      path: { id: project.id },
      body: { slug: s, description: null },
    });
    expect(moved).toEqual({
      ...renamed,
      slug: s,
      description: null,
      updated_at: app.clock.now().toISOString(),
    });
    expect(await owner.api.projectGet({ path: { id: project.id } })).toEqual(moved);

    const updates = (await auditOf(app, project.id)).filter((e) => e.action === 'project.updated');
    expect(updates).toEqual([
      expect.objectContaining({
        actor_user_id: owner.userId,
        request_id: renameRequest,
        project_id: project.id,
        target_id: project.id,
      }),
      expect.objectContaining({
        actor_user_id: admin.userId,
        request_id: admin.lastRequestId(),
        project_id: project.id,
      }),
    ]);
  });

  it('writes nothing when nothing changes: same updated_at, no audit entry', async () => {
    const project = await create(owner, team, { name: 'Same', description: 'Same' });
    app.clock.advance(60_000);
    expect(await owner.api.projectUpdate({ path: { id: project.id }, body: {} })).toEqual(project);
    expect(
      await owner.api.projectUpdate({
        path: { id: project.id },
        body: { name: 'Same', slug: project.slug, description: 'Same' },
      }),
    ).toEqual(project);
    expect((await auditOf(app, project.id)).map((e) => e.action)).toEqual(['project.created']);
  });

  it('refuses a slug another project of the organization has with 409 slug-taken, changing nothing', async () => {
    const a = await create(owner, team);
    const b = await create(owner, team);
    const before = await projectRow(app, b.id);
    expect(
      await outcome(owner.api.projectUpdate({ path: { id: b.id }, body: { slug: a.slug, name: 'B2' } })),
    ).toEqual([409, 'slug-taken']);
    expect(await projectRow(app, b.id)).toEqual(before);
    expect((await auditOf(app, b.id)).map((e) => e.action)).toEqual(['project.created']);
  });

  it('refuses billing and member roles with 403 forbidden, changing nothing; they still read it', async () => {
    const project = await create(owner, team);
    const before = await projectRow(app, project.id);
    for (const caller of [billing, member]) {
      expect(
        await outcome(caller.api.projectUpdate({ path: { id: project.id }, body: { name: 'Taken over' } })),
      ).toEqual([403, 'forbidden']);
      expect(await caller.api.projectGet({ path: { id: project.id } })).toEqual(project);
    }
    expect(await projectRow(app, project.id)).toEqual(before);
  });

  it('reads the role at the write: a demoted admin is refused, a removed one sees 404', async () => {
    const former = await signedIn(app, smtp, 'former');
    const org = await teamOrganization(app, [
      [owner.userId, 'owner'],
      [former.userId, 'admin'],
    ]);
    const project = await create(former, org);
    await app.sql`update organization_members set role = 'member' where organization_id = ${org} and user_id = ${former.userId}`;
    expect(
      await outcome(former.api.projectUpdate({ path: { id: project.id }, body: { name: 'x' } })),
    ).toEqual([403, 'forbidden']);
    await app.sql`delete from organization_members where organization_id = ${org} and user_id = ${former.userId}`;
    expect(await outcome(former.api.projectDelete({ path: { id: project.id } }))).toEqual([404, 'not-found']);
    expect(await projectRow(app, project.id)).toMatchObject({ name: 'A project' });
  });

  it('refuses a blank name with 400 invalid-field-value', async () => {
    const project = await create(owner, team);
    const before = await projectRow(app, project.id);
    const err = await refusal(owner.api.projectUpdate({ path: { id: project.id }, body: { name: ' ' } }));
    expect([err.status, err.code, err.errors[0]?.pointer]).toEqual([400, 'invalid-field-value', '/name']);
    expect(await projectRow(app, project.id)).toEqual(before);
  });
});

describe('DELETE /projects/{id}', () => {
  it('deletes and records project.deleted', async () => {
    const project = await create(owner, team);
    await owner.api.projectDelete({ path: { id: project.id } });
    const requestId = owner.lastRequestId();
    expect(await projectRow(app, project.id)).toBeUndefined();
    expect(await outcome(owner.api.projectGet({ path: { id: project.id } }))).toEqual([404, 'not-found']);
    const [, deleted] = await auditOf(app, project.id);
    expect(deleted).toEqual({
      organization_id: team,
      action: 'project.deleted',
      actor_user_id: owner.userId,
      target_type: 'project',
      target_id: project.id,
      project_id: project.id,
      request_id: requestId,
      created_at: app.clock.now(),
    });
  });

  it.each([
    ['active', { status: 'active' }],
    ['suspended', { status: 'suspended' }],
    ['ended but not deleted', { status: 'ended' }],
  ] as const)(
    'refuses while the project holds a subscription (%s) with 422 project-has-subscriptions',
    async (_, sub) => {
      const project = await create(owner, team);
      await insertSubscription(app, project.id, sub);
      const before = await projectRow(app, project.id);
      const err = await refusal(owner.api.projectDelete({ path: { id: project.id } }));
      expect([err.status, err.code]).toEqual([422, 'project-has-subscriptions']);
      expect(await projectRow(app, project.id)).toEqual(before);
      expect((await auditOf(app, project.id)).map((e) => e.action)).toEqual(['project.created']);
    },
  );

  it('deletes a project whose subscriptions are all deleted', async () => {
    const project = await create(owner, team);
    await insertSubscription(app, project.id, { deleted: true });
    await insertSubscription(app, project.id, { deleted: true, status: 'ended' });
    await admin.api.projectDelete({ path: { id: project.id } });
    expect(await projectRow(app, project.id)).toBeUndefined();
    expect((await auditOf(app, project.id)).map((e) => [e.action, e.actor_user_id])).toEqual([
      ['project.created', owner.userId],
      ['project.deleted', admin.userId],
    ]);
  });

  it('refuses billing and member roles with 403 forbidden, deleting nothing', async () => {
    const project = await create(owner, team);
    for (const caller of [billing, member]) {
      expect(await outcome(caller.api.projectDelete({ path: { id: project.id } }))).toEqual([
        403,
        'forbidden',
      ]);
    }
    expect(await projectRow(app, project.id)).toBeDefined();
    expect((await auditOf(app, project.id)).map((e) => e.action)).toEqual(['project.created']);
  });
});
