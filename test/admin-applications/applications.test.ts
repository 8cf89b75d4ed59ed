// POST /admin/applications and POST /admin/applications/{id}/token (DECISIONS.md §4, "applications";
// §3 "Application token"): staff holding manage_applications, through an elevated session or an
// admin-authorized API token, register applications and rotate their tokens; the token is shown once
// and only its keyed digest is kept. Every refusal changes nothing.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { outcome, refusal } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { clientOf, countOf, registerApplication, staff, type Staff } from '../applications/fixtures.js';

let app: TestApp;
let smtp: TestSmtp;
/** Holds manage_applications; `other` holds every staff permission but that one. */
let registrar: Staff, other: Staff;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  [registrar, other] = await Promise.all([
    staff(app, smtp, 'registrar', ['manage_applications']),
    staff(app, smtp, 'other-staff', [
      'manage_users',
      'view_all_orders',
      'manage_services',
      'manage_billing',
      'manage_public_content',
    ]),
  ]);
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const TOKEN_FORM = (id: string) => new RegExp(`^svc_app_${id}_[0-9A-Za-z]{43}$`);

interface StoredApplication {
  id: string;
  name: string;
  capabilities: string[];
  token_digest: Buffer;
  token_rotated_at: Date;
  created_by: string | null;
}
const stored = async (id: string): Promise<StoredApplication | undefined> => {
  const [row] = await app.sql<StoredApplication[]>`
    select id, name, capabilities, token_digest, token_rotated_at, created_by from applications where id = ${id}`;
  return row;
};

/** A call only an application holding users.read.public may make: whether its token works. */
const works = async (token: string) =>
  outcome(clientOf(app, token).applicationUserGet({ path: { id: registrar.id } }));

describe('registering an application', () => {
  it('answers 201 with the application and its token, keeps only a 32-byte digest and records an event', async () => {
    const answer = await registrar.elevated.adminApplicationCreate({
      body: { name: '  Game panel  ', capabilities: ['users.read.public', 'users.lookup.oauth'] },
    });
    const now = app.clock.now().toISOString();
    expect(answer).toEqual({
      application: {
        id: expect.any(String),
        name: 'Game panel',
        capabilities: ['users.lookup.oauth', 'users.read.public'],
        created_at: now,
        token_rotated_at: now,
      },
      token: expect.any(String),
    });
    const { id } = answer.application;
    expect(answer.token).toMatch(TOKEN_FORM(id));

    const row = await stored(id);
    expect(row?.token_digest).toHaveLength(32);
    expect(row?.created_by).toBe(registrar.id);
    // Not the token, not its secret part, anywhere in the row or the event.
    const secret = answer.token.slice(answer.token.lastIndexOf('_') + 1);
    const [whole] = await app.sql<
      { text: string }[]
    >`select row_to_json(a)::text as text from applications a where id = ${id}`;
    expect(whole!.text).not.toContain(secret);

    const events = await app.sql<{ action: string; target_type: string; details: Record<string, unknown> }[]>`
      select action, target_type, details from platform_events where target_id = ${id}`;
    expect(events).toEqual([
      {
        action: 'application.created',
        target_type: 'application',
        details: {
          name: 'Game panel',
          capabilities: ['users.lookup.oauth', 'users.read.public'],
          actor_user_id: registrar.id,
          actor_token_id: null,
        },
      },
    ]);
    expect(JSON.stringify(events)).not.toContain(secret);
    expect(await works(answer.token)).toBe('ok');
  });

  it('refuses anonymous, un-elevated, elevated-without-the-permission callers and bad bodies, registering nothing', async () => {
    const before = await countOf(app, 'applications');
    const body = { name: 'Refused', capabilities: ['users.read.public' as const] };
    // Each call made in turn (thunks), and each answer with the pointer its 400 names.
    const cases: [string, () => Promise<unknown>, [number, string, string?]][] = [
      ['anonymous', () => clientOf(app).adminApplicationCreate({ body }), [401, 'unauthenticated']],
      [
        'un-elevated staff',
        () => registrar.api.adminApplicationCreate({ body }),
        [403, 'elevation-required'],
      ],
      [
        'elevated, not manage_applications',
        () => other.elevated.adminApplicationCreate({ body }),
        [403, 'forbidden'],
      ],
      [
        'unknown capability',
        () =>
          registrar.elevated.adminApplicationCreate({
            body: { name: 'x', capabilities: ['users.read.public', 'users.read.private'] },
          }),
        [400, 'invalid-field-value', '/capabilities/1'],
      ],
      [
        'blank name',
        () => registrar.elevated.adminApplicationCreate({ body: { ...body, name: '   ' } }),
        [400, 'invalid-field-value', '/name'],
      ],
      [
        '65 characters',
        () => registrar.elevated.adminApplicationCreate({ body: { ...body, name: 'n'.repeat(65) } }),
        [400, 'invalid-field-value', '/name'],
      ],
    ];
    for (const [name, call, want] of cases) {
      const e = await refusal(call());
      const got = e.status === 400 ? [e.status, e.code, e.errors[0]?.pointer] : [e.status, e.code];
      expect([name, got]).toEqual([name, want]);
    }
    expect(await countOf(app, 'applications')).toBe(before);
    expect(await app.sql`select 1 from platform_events where details->>'name' = 'Refused'`).toHaveLength(0);
  });

  it('takes a name of 64 characters', async () => {
    const { application } = await registrar.elevated.adminApplicationCreate({
      body: { name: 'n'.repeat(64), capabilities: [] },
    });
    expect(application.name).toBe('n'.repeat(64));
  });
});

describe('rotating the token', () => {
  it('answers a new token that works at once, while the old one is refused from then on', async () => {
    const application = await registerApplication(app, registrar, ['users.read.public']);
    const before = await stored(application.id);
    app.clock.advance(1000);
    const { token } = await registrar.elevated.adminApplicationTokenRotate({ path: { id: application.id } });
    expect(token).toMatch(TOKEN_FORM(application.id));
    expect(token).not.toBe(application.token);
    expect(await works(token)).toBe('ok');
    expect(await works(application.token)).toEqual([401, 'unauthenticated']);
    const after = await stored(application.id);
    expect(after?.token_rotated_at).toEqual(app.clock.now());
    expect(after?.token_digest.equals(before!.token_digest)).toBe(false);
    const events = await app.sql<{ action: string }[]>`
      select action from platform_events where target_id = ${application.id} order by created_at, id`;
    expect(events.map((e) => e.action)).toEqual(['application.created', 'application.token_rotated']);
  });

  it('answers 404 for an unknown application', async () => {
    expect(
      await outcome(registrar.elevated.adminApplicationTokenRotate({ path: { id: randomUUID() } })),
    ).toEqual([404, 'not-found']);
  });

  it('refuses anonymous, un-elevated and elevated-without-the-permission callers; the token still works', async () => {
    const application = await registerApplication(app, registrar, ['users.read.public']);
    const before = await stored(application.id);
    const path = { id: application.id };
    expect(await outcome(clientOf(app).adminApplicationTokenRotate({ path }))).toEqual([
      401,
      'unauthenticated',
    ]);
    expect(await outcome(registrar.api.adminApplicationTokenRotate({ path }))).toEqual([
      403,
      'elevation-required',
    ]);
    expect(await outcome(other.elevated.adminApplicationTokenRotate({ path }))).toEqual([403, 'forbidden']);
    // The application itself may not rotate its own token either.
    expect(await outcome(application.api.adminApplicationTokenRotate({ path }))).toEqual([403, 'forbidden']);
    expect(await stored(application.id)).toEqual(before);
    expect(await works(application.token)).toBe('ok');
  });
});

describe('an admin-authorized API token', () => {
  it('registers applications without an elevated session, until its owner loses manage_applications', async () => {
    const holder = await staff(app, smtp, 'token-staff', ['manage_applications']);
    // Minted while elevated: the token carries the staff power, not the elevation.
    const { secret } = await holder.elevated.meApiTokenCreate({
      body: {
        name: 'registrar',
        admin_authorized: true,
        authorization: { grants: [{ capability: 'admin.applications.manage', scope: { kind: 'all' } }] },
      },
    });
    const viaToken = clientOf(app, secret);
    const { application, token } = await viaToken.adminApplicationCreate({
      body: { name: 'By token', capabilities: ['users.read.public'] },
    });
    expect(token).toMatch(TOKEN_FORM(application.id));
    expect((await stored(application.id))?.created_by).toBe(holder.id);

    await app.sql`update users set system_permissions = '{}' where id = ${holder.id}`;
    const before = await countOf(app, 'applications');
    expect(
      await outcome(viaToken.adminApplicationCreate({ body: { name: 'Too late', capabilities: [] } })),
    ).toEqual([403, 'forbidden']);
    expect(await outcome(viaToken.adminApplicationTokenRotate({ path: { id: application.id } }))).toEqual([
      403,
      'forbidden',
    ]);
    expect(await countOf(app, 'applications')).toBe(before);
    expect(await works(token)).toBe('ok');
  });

  it('without the capability, is refused even when its owner holds manage_applications', async () => {
    const holder = await staff(app, smtp, 'token-staff-2', ['manage_applications']);
    const { secret } = await holder.api.meApiTokenCreate({
      body: { name: 'plain', authorization: { grants: [{ capability: 'me.read', scope: { kind: 'all' } }] } },
    });
    const before = await countOf(app, 'applications');
    expect(
      await outcome(clientOf(app, secret).adminApplicationCreate({ body: { name: 'No', capabilities: [] } })),
    ).toEqual([403, 'forbidden']);
    expect(await countOf(app, 'applications')).toBe(before);
  });
});
