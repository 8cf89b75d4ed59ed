// What a token's grants reach (DECISIONS.md §3, seed document 1 "Authentication"): the effective
// permission is the owner's role intersected with the grants of the operation's capability, decided
// again on every request. Something out of reach answers the 404 of something that does not exist;
// lists hold only what is in reach. Also the legacy unrestricted token (grants null).
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { outcome } from '../support/refusal.js';
import {
  answerOf,
  bearer,
  digestOf,
  everywhere,
  inOrganization,
  inProject,
  mint,
  pepper,
  person,
  useApp,
  type Person,
} from './support.js';

const h = useApp();

let n = 0;
const slug = (tag: string) => `${tag}-${Date.now().toString(36)}-${(n += 1)}`;

/** A person in two organizations of their own, A with two projects and B with one. */
async function twoOrganizations(tag: string) {
  const me = await person(h, tag);
  const { id: a } = await me.api.organizationCreate({ body: { name: 'A', slug: slug('a') } });
  const { id: b } = await me.api.organizationCreate({ body: { name: 'B', slug: slug('b') } });
  const a1 = await me.api.projectCreate({ path: { id: a }, body: { name: 'A one', slug: slug('a1') } });
  const a2 = await me.api.projectCreate({ path: { id: a }, body: { name: 'A two', slug: slug('a2') } });
  const b1 = await me.api.projectCreate({ path: { id: b }, body: { name: 'B one', slug: slug('b1') } });
  return { me, a, b, a1: a1.id, a2: a2.id, b1: b1.id };
}

const ids = (rows: { id: string }[]) => rows.map((r) => r.id).sort();

describe('a grant scoped to an organization', () => {
  it("reads that organization's projects; another organization's project answers as an unknown id", async () => {
    const { me, a, a1, a2, b1 } = await twoOrganizations('proj-org');
    const asToken = bearer(h.app, (await mint(me.api, [inOrganization('projects.read', a)])).secret);
    expect((await asToken.projectGet({ path: { id: a1 } })).organization_id).toBe(a);
    // The user is an Owner of B: only the token's scope keeps it out.
    expect((await me.api.projectGet({ path: { id: b1 } })).id).toBe(b1);
    const outOfReach = await answerOf(asToken.projectGet({ path: { id: b1 } }));
    expect(outOfReach).toMatchObject({ status: 404, code: 'not-found' });
    expect(outOfReach).toEqual(await answerOf(asToken.projectGet({ path: { id: randomUUID() } })));
    // The session sees B's project and the personal games project too; the token only A's.
    expect((await me.api.projectList()).length).toBeGreaterThan(2);
    expect(ids(await asToken.projectList())).toEqual([a1, a2].sort());
  });

  it('lists only that organization, and answers another as an unknown id', async () => {
    const { me, a, b } = await twoOrganizations('org-read');
    const asToken = bearer(h.app, (await mint(me.api, [inOrganization('organizations.read', a)])).secret);
    expect((await asToken.organizationList()).map((o) => o.id)).toEqual([a]);
    expect((await asToken.organizationGet({ path: { id: a } })).id).toBe(a);
    const outOfReach = await answerOf(asToken.organizationGet({ path: { id: b } }));
    expect(outOfReach).toMatchObject({ status: 404, code: 'not-found' });
    expect(outOfReach).toEqual(await answerOf(asToken.organizationGet({ path: { id: randomUUID() } })));
  });
});

describe('a grant scoped to a project', () => {
  it("reads that project alone, also in its organization's project list", async () => {
    const { me, a, b, a1, a2 } = await twoOrganizations('proj-one');
    const asToken = bearer(h.app, (await mint(me.api, [inProject('projects.read', a1)])).secret);
    expect((await asToken.projectGet({ path: { id: a1 } })).id).toBe(a1);
    expect(await outcome(asToken.projectGet({ path: { id: a2 } }))).toEqual([404, 'not-found']);
    expect(ids(await asToken.organizationProjectList({ path: { id: a } }))).toEqual([a1]);
    expect(await outcome(asToken.organizationProjectList({ path: { id: b } }))).toEqual([404, 'not-found']);
    expect(ids(await asToken.projectList())).toEqual([a1]);
  });
});

describe('the role, read on every request', () => {
  const roleOf = async (organizationId: string, userId: string) =>
    (
      await h.app.sql<{ role: string }[]>`
        select role from organization_members where organization_id = ${organizationId} and user_id = ${userId}`
    )[0]?.role;

  it("takes a demotion into account on the token's next request, and audits what the token did", async () => {
    const owner = await person(h, 'owner');
    const admin = await person(h, 'admin');
    const [first, second] = [await person(h, 'first'), await person(h, 'second')];
    const { id: org } = await owner.api.organizationCreate({
      body: { name: 'Demotion', slug: slug('demote') },
    });
    await owner.api.memberAdd({ path: { id: org }, body: { user_id: admin.id, role: 'admin' } });
    const { secret, token } = await mint(admin.api, [inOrganization('members.manage', org)]);
    const asToken = bearer(h.app, secret);

    await asToken.memberAdd({ path: { id: org }, body: { user_id: first.id } });
    expect(await roleOf(org, first.id)).toBe('member');
    const audit = await owner.api.organizationAuditList({
      path: { id: org },
      query: { action: 'member.added' },
    });
    expect(audit.data.find((e) => e.target.id === first.id)?.actor).toEqual({
      user_id: admin.id,
      token_id: token.id,
      application_id: null,
      acting_as_user_id: null,
    });

    await owner.api.memberUpdate({ path: { id: org, user_id: admin.id }, body: { role: 'member' } });
    expect(await outcome(asToken.memberAdd({ path: { id: org }, body: { user_id: second.id } }))).toEqual([
      403,
      'forbidden',
    ]);
    expect(await roleOf(org, second.id)).toBeUndefined();
  });
});

describe('a legacy unrestricted token (grants null)', () => {
  // Only the credential's shape matters here (43 base62 characters), not an unbiased draw.
  const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  const secretPart = () => [...randomBytes(43)].map((b) => base62[b % 62]).join('');

  /** A token as minted before grants existed: written straight into the table. */
  async function legacyToken(owner: Person): Promise<{ id: string; credential: string }> {
    const id = randomUUID();
    const credential = `svc_pat_${id}_${secretPart()}`;
    await h.app.sql`
      insert into api_tokens (id, user_id, name, secret_digest, grants, admin_authorized, created_at)
      values (${id}, ${owner.id}, 'legacy', ${digestOf(await pepper(h.app), credential)}, null, false, ${h.app.clock.now()})`;
    return { id, credential };
  }

  it('lists with no capabilities and no authorization, reads everywhere, and calls no admin route', async () => {
    const staff = await person(h, 'legacy', ['manage_users']);
    const target = await person(h, 'legacy-target');
    // The pepper is made on first use; minting makes sure it exists.
    await mint(staff.api, [everywhere('me.read')]);
    await staff.api.organizationCreate({ body: { name: 'Legacy', slug: slug('legacy') } });
    const { id, credential } = await legacyToken(staff);

    const listed = (await staff.api.meApiTokenList()).find((t) => t.id === id);
    expect(listed).toMatchObject({
      id,
      name: 'legacy',
      capabilities: [],
      authorization: null,
      admin_authorized: false,
    });

    const asToken = bearer(h.app, credential);
    const organizations = await staff.api.organizationList();
    expect(organizations.length).toBe(2);
    expect(await asToken.organizationList()).toEqual(organizations);

    expect(
      await outcome(
        asToken.adminUserPermissionsSet({ path: { id: target.id }, body: { permissions: ['manage_users'] } }),
      ),
    ).toEqual([403, 'forbidden']);
    const [row] = await h.app.sql<
      { p: string[] }[]
    >`select system_permissions as p from users where id = ${target.id}`;
    expect(row!.p).toEqual([]);
  });
});
