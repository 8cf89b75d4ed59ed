// POST /me/api-tokens and GET /me/api-tokens (seed document 1, "Personal API token", "Token creation
// answer", "Personal API tokens and delegations", "Limits"; DECISIONS.md §3): the secret is shown once
// and only its keyed digest is kept; every rule refuses with its pointer and creates nothing; only a full
// session mints; an expired or revoked token is refused at once.
import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CAPABILITIES } from '../../server/src/authz/capabilities.js';
import { SYSTEM_PERMISSIONS } from '../../server/src/authz/system-permissions.js';
import { formatPersonalApiToken, newSecret } from '../../server/src/auth/crypto/tokens.js';
import { resolveCredential } from '../../server/src/authz/credentials.js';
import type { RequestContext } from '../../server/src/http/handler.js';
import { outcome, refusal } from '../support/refusal.js';
import {
  answerOf,
  bearer,
  digestOf,
  elevated,
  everywhere,
  inOrganization,
  mint,
  pepper,
  person,
  tokenCount,
  tokenRow,
  useApp,
  type CreateBody,
  type GrantRequest,
} from './support.js';

const h = useApp();

let n = 0;
const slug = () => `tok-${Date.now().toString(36)}-${(n += 1)}`;

describe('POST /me/api-tokens', () => {
  it('answers 201 with the whole credential once and the token object', async () => {
    const me = await person(h, 'mint');
    const grants = [everywhere('me.read')];
    const created = await mint(me.api, grants, { name: 'ci deploys' });
    expect(me.lastStatus()).toBe(201);
    const { secret, token } = created;
    expect(secret).toMatch(new RegExp(`^svc_pat_${token.id}_[0-9A-Za-z]{43}$`));
    expect(token).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'ci deploys',
      capabilities: ['me.read'],
      authorization: { grants },
      admin_authorized: false,
      created_at: h.app.clock.now().toISOString(),
      expires_at: null,
      last_used_at: null,
    });
  });

  it('stores neither the secret nor its plain digest, only the keyed digest of the whole credential', async () => {
    const me = await person(h, 'digest');
    const { secret, token } = await mint(me.api, [everywhere('me.read')]);
    const row = await tokenRow(h.app, token.id);
    expect(row!.secret_digest).toHaveLength(32);
    expect(row!.secret_digest.equals(createHash('sha256').update(secret).digest())).toBe(false);
    // The one digest that should be there: HMAC-SHA-256 under the pepper, so a leaked table alone
    // cannot even confirm a guess.
    expect(row!.secret_digest.equals(digestOf(await pepper(h.app), secret))).toBe(true);
    const [text] = await h.app.sql<
      { t: string }[]
    >`select row_to_json(t)::text as t from api_tokens t where id = ${token.id}`;
    const secretPart = secret.slice(-43);
    expect(text!.t).not.toContain(secretPart);
    expect(text!.t).not.toContain(Buffer.from(secretPart).toString('hex'));
  });

  it("mints a token that works as a bearer, and never carries the owner's staff permissions", async () => {
    // Staff, so that the empty system_permissions of the token's GET /me says something.
    const me = await person(h, 'bearer', ['manage_users']);
    const { secret } = await mint(me.api, [everywhere('me.read')]);
    expect((await me.api.meGet()).system_permissions).toEqual(['manage_users']);
    const asToken = await bearer(h.app, secret).meGet();
    expect(asToken.id).toBe(me.id);
    expect(asToken.system_permissions).toEqual([]);
  });

  it('reports capabilities as the sorted distinct names across the grants, whatever their scope', async () => {
    const me = await person(h, 'caps');
    const { id: org } = await me.api.organizationCreate({ body: { name: 'Caps', slug: slug() } });
    const grants: GrantRequest[] = [
      inOrganization('projects.read', org),
      everywhere('me.read'),
      everywhere('projects.read'),
      inOrganization('audit.read', org),
    ];
    const { token } = await mint(me.api, grants);
    expect(token.capabilities).toEqual(['audit.read', 'me.read', 'projects.read']);
    expect(token.authorization).toEqual({ grants });
    expect((await me.api.meApiTokenList()).find((t) => t.id === token.id)?.capabilities).toEqual([
      'audit.read',
      'me.read',
      'projects.read',
    ]);
  });
});

describe('GET /me/api-tokens', () => {
  it("lists the caller's own live tokens newest first, revoked ones omitted, never a secret", async () => {
    const me = await person(h, 'list');
    const other = await person(h, 'list-other');
    const minted = [];
    for (const name of ['first', 'second', 'third']) {
      // The clock is frozen: move it so the three have distinct creation times.
      h.app.clock.advance(1000);
      minted.push(await mint(me.api, [everywhere('me.read')], { name }));
    }
    const othersToken = await mint(other.api, [everywhere('me.read')]);
    await me.api.meApiTokenRevoke({ path: { token_id: minted[1]!.token.id } });
    const list = await me.api.meApiTokenList();
    expect(list).toEqual([minted[2]!.token, minted[0]!.token]);
    const text = JSON.stringify(list);
    expect(text).not.toContain('secret');
    for (const m of [...minted, othersToken]) expect(text).not.toContain(m.secret.slice(-43));
    expect((await other.api.meApiTokenList()).map((t) => t.id)).toEqual([othersToken.token.id]);
  });
});

describe('POST /me/api-tokens refusals, each creating nothing', () => {
  // [what, body, [status, code], pointer of the refused field]
  const cases = (org: {
    foreign: string;
    unknown: string;
  }): [string, Partial<CreateBody>, [number, string], string | null][] => [
    ['a blank name', { name: '   ' }, [400, 'invalid-field-value'], '/name'],
    [
      'a name of 65 characters after trimming',
      { name: ` ${'n'.repeat(65)} ` },
      [400, 'invalid-field-value'],
      '/name',
    ],
    [
      'an unknown capability',
      { authorization: { grants: [everywhere('me.read'), everywhere('projects.destroy')] } },
      [400, 'invalid-field-value'],
      '/authorization/grants/1/capability',
    ],
    [
      'an organization scope for an account-level capability',
      { authorization: { grants: [inOrganization('me.read', org.foreign)] } },
      [400, 'invalid-field-value'],
      '/authorization/grants/0/scope/kind',
    ],
    [
      'an organization scope without an id',
      { authorization: { grants: [{ capability: 'projects.read', scope: { kind: 'organization' } }] } },
      [400, 'invalid-field-value'],
      '/authorization/grants/0/scope/id',
    ],
    [
      'an organization the caller does not belong to',
      { authorization: { grants: [inOrganization('projects.read', org.foreign)] } },
      [400, 'invalid-field-value'],
      '/authorization/grants/0/scope/id',
    ],
    [
      'an unknown organization',
      { authorization: { grants: [inOrganization('projects.read', org.unknown)] } },
      [400, 'invalid-field-value'],
      '/authorization/grants/0/scope/id',
    ],
    [
      'admin_authorized without an admin-only capability',
      { admin_authorized: true },
      [400, 'invalid-field-value'],
      '/admin_authorized',
    ],
  ];

  it('refuses each rule with its pointer', async () => {
    const me = await person(h, 'rules');
    const stranger = await person(h, 'rules-stranger');
    const { id: foreign } = await stranger.api.organizationCreate({
      body: { name: 'Not yours', slug: slug() },
    });
    const base: CreateBody = { name: 'fine', authorization: { grants: [everywhere('me.read')] } };
    for (const [what, change, want, pointer] of cases({ foreign, unknown: randomUUID() })) {
      const e = await refusal(me.api.meApiTokenCreate({ body: { ...base, ...change } }));
      expect([what, e.status, e.code], e.detail).toEqual([what, ...want]);
      expect([what, e.errors.map((i) => i.pointer)]).toEqual([what, pointer ? [pointer] : []]);
    }
    expect(await tokenCount(h.app, me.id)).toBe(0);
  });

  it('answers an organization the caller is not in exactly as an unknown one', async () => {
    const me = await person(h, 'enum');
    const stranger = await person(h, 'enum-stranger');
    const { id: foreign } = await stranger.api.organizationCreate({ body: { name: 'Hidden', slug: slug() } });
    const body = (id: string): CreateBody => ({
      name: 'x',
      authorization: { grants: [inOrganization('projects.read', id)] },
    });
    const notMine = await answerOf(me.api.meApiTokenCreate({ body: body(foreign) }));
    const unknown = await answerOf(me.api.meApiTokenCreate({ body: body(randomUUID()) }));
    expect(notMine).toEqual(unknown);
    expect(await tokenCount(h.app, me.id)).toBe(0);
  });

  it('refuses an expiry in the past or exactly now', async () => {
    const me = await person(h, 'expiry');
    const now = h.app.clock.now().getTime();
    for (const at of [now - 1000, now]) {
      const e = await refusal(
        me.api.meApiTokenCreate({
          body: {
            name: 'x',
            expires_at: new Date(at).toISOString(),
            authorization: { grants: [everywhere('me.read')] },
          },
        }),
      );
      expect([e.status, e.code, e.errors.map((i) => i.pointer)]).toEqual([
        400,
        'invalid-field-value',
        ['/expires_at'],
      ]);
    }
    expect(await tokenCount(h.app, me.id)).toBe(0);
  });

  it('keeps a name of 64 characters, trimmed of its surrounding spaces', async () => {
    const me = await person(h, 'name-64');
    const name = `${'a'.repeat(31)} ${'b'.repeat(32)}`;
    const { token } = await mint(me.api, [everywhere('me.read')], { name: `  ${name}\t ` });
    expect(token.name).toBe(name);
    expect((await tokenRow(h.app, token.id))!.name).toBe(name);
  });
});

describe('admin-only capabilities', () => {
  const adminGrant = { name: 'staff', authorization: { grants: [everywhere('admin.users.manage')] } };

  it('refuses a user without the system permission, even elevated and admin-authorized: 403 forbidden', async () => {
    const me = await person(h, 'not-staff');
    const session = await elevated(h, me);
    expect(
      await outcome(session.meApiTokenCreate({ body: { ...adminGrant, admin_authorized: true } })),
    ).toEqual([403, 'forbidden']);
    expect(await outcome(me.api.meApiTokenCreate({ body: adminGrant }))).toEqual([403, 'forbidden']);
    expect(await tokenCount(h.app, me.id)).toBe(0);
  });

  it('asks staff for admin_authorized and an elevated session: 403 elevation-required otherwise', async () => {
    const staff = await person(h, 'staff', ['manage_users']);
    const session = await elevated(h, staff);
    // Elevated, but admin_authorized left out.
    expect(await outcome(session.meApiTokenCreate({ body: adminGrant }))).toEqual([
      403,
      'elevation-required',
    ]);
    // admin_authorized, but from the un-elevated session.
    expect(
      await outcome(staff.api.meApiTokenCreate({ body: { ...adminGrant, admin_authorized: true } })),
    ).toEqual([403, 'elevation-required']);
    expect(await tokenCount(h.app, staff.id)).toBe(0);
  });

  it('mints for elevated staff holding the permission, with admin_authorized true', async () => {
    const staff = await person(h, 'staff-ok', ['manage_users']);
    const session = await elevated(h, staff);
    const { token } = await session.meApiTokenCreate({ body: { ...adminGrant, admin_authorized: true } });
    expect(token.admin_authorized).toBe(true);
    expect(token.capabilities).toEqual(['admin.users.manage']);
    expect((await tokenRow(h.app, token.id))!.admin_authorized).toBe(true);
  });
});

describe('what a token itself may not do', () => {
  it('refuses minting and revoking by a token, even one holding every capability: 403 forbidden', async () => {
    const staff = await person(h, 'all-caps', [...SYSTEM_PERMISSIONS]);
    const session = await elevated(h, staff);
    const { secret, token } = await session.meApiTokenCreate({
      body: {
        name: 'everything',
        admin_authorized: true,
        authorization: { grants: CAPABILITIES.map((c) => everywhere(c.name)) },
      },
    });
    const asToken = bearer(h.app, secret);
    expect(
      await outcome(
        asToken.meApiTokenCreate({
          body: { name: 'child', authorization: { grants: [everywhere('me.read')] } },
        }),
      ),
    ).toEqual([403, 'forbidden']);
    expect(await outcome(asToken.meApiTokenRevoke({ path: { token_id: token.id } }))).toEqual([
      403,
      'forbidden',
    ]);
    expect(await tokenCount(h.app, staff.id)).toBe(1);
    expect((await tokenRow(h.app, token.id))!.revoked_at).toBeNull();
  });

  it('refuses an expired token from the instant it expires: 401 unauthenticated', async () => {
    const me = await person(h, 'expired');
    const expiresAt = new Date(h.app.clock.now().getTime() + 60_000);
    const { secret } = await mint(me.api, [everywhere('me.read')], { expires_at: expiresAt.toISOString() });
    const asToken = bearer(h.app, secret);
    h.app.clock.advance(59_999);
    expect((await asToken.meGet()).id).toBe(me.id);
    h.app.clock.advance(1);
    expect(await outcome(asToken.meGet())).toEqual([401, 'unauthenticated']);
  });

  it('refuses a wrong secret for a known id and an unknown id alike, neither sooner than the floor', async () => {
    const me = await person(h, 'floor');
    const { secret, token } = await mint(me.api, [everywhere('me.read')]);
    const answer = async (raw: string) => {
      const err = await refusal(bearer(h.app, raw).meGet());
      return [err.status, err.code, err.title, err.detail];
    };
    const known = formatPersonalApiToken(token.id, newSecret());
    const unknown = formatPersonalApiToken(randomUUID(), newSecret());
    expect(await answer(known)).toEqual([401, 'unauthenticated', expect.any(String), expect.any(String)]);
    expect(await answer(unknown)).toEqual(await answer(known));
    // The check itself, without HTTP around it (well under a millisecond here): a refusal waits for
    // TOKEN_REFUSAL_FLOOR_MS (authz/credentials.ts) from the check's start, so whatever a known id costs
    // PostgreSQL more ends inside it; the right secret waits for nothing.
    const check = async (raw: string) => {
      const ctx = {
        headers: { authorization: `Bearer ${raw}` },
        header: () => undefined,
        sql: h.app.sql,
        clock: h.app.clock,
        pepper: () => pepper(h.app),
      } as unknown as RequestContext;
      const start = performance.now();
      const outcome = await resolveCredential(ctx).then(
        (credential) => credential.kind,
        (err: unknown) => (err as { status?: number }).status,
      );
      return { outcome, ms: performance.now() - start };
    };
    expect((await check(secret)).outcome).toBe('token');
    for (const raw of [known, unknown]) {
      const refused = await check(raw);
      expect(refused.outcome).toBe(401);
      expect(refused.ms).toBeGreaterThanOrEqual(4); // the timer counts whole milliseconds
    }
  });

  it('refuses a revoked token on the very next request: 401 unauthenticated', async () => {
    const me = await person(h, 'revoked');
    const { secret, token } = await mint(me.api, [everywhere('me.read')]);
    const asToken = bearer(h.app, secret);
    expect((await asToken.meGet()).id).toBe(me.id);
    await me.api.meApiTokenRevoke({ path: { token_id: token.id } });
    expect(await outcome(asToken.meGet())).toEqual([401, 'unauthenticated']);
  });
});
