// Application reads (document 1, "Application reads", "Application user profile", "Linked-account
// lookup answer"): a registered application, as itself and holding the capability, reads users' public
// profiles (never an email; deleted accounts too) and finds the user behind a linked provider account.
// Every other caller kind is refused with 403.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { outcome, refusal } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import {
  clientOf,
  person,
  personalToken,
  registerApplication,
  staff,
  type Application,
  type Person,
  type Staff,
} from './fixtures.js';

let app: TestApp;
let smtp: TestSmtp;
let registrar: Staff;
/** Holds both read capabilities; `profilesOnly` holds users.read.public; `bare` holds none. */
let reader: Application, profilesOnly: Application, bare: Application;
let u1: Person, u2: Person;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  registrar = await staff(app, smtp, 'registrar', ['manage_applications']);
  reader = await registerApplication(app, registrar, ['users.read.public', 'users.lookup.oauth']);
  profilesOnly = await registerApplication(app, registrar, ['users.read.public']);
  bare = await registerApplication(app, registrar, []);
  [u1, u2] = await Promise.all([person(app, smtp, 'u1'), person(app, smtp, 'u2')]);
  // Names and languages of their own, so an answer shows whose fields it carries.
  await app.sql`update users set name = 'Ada Lovelace', language = 'fr-CA' where id = ${u1.id}`;
  await app.sql`update users set name = 'Grace Hopper' where id = ${u2.id}`;
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const profile = (id: string, name: string, deleted_at: string | null = null) => ({
  id,
  name,
  avatar_asset_id: null,
  deleted_at,
});

async function link(userId: string, provider = 'github', subject = randomUUID()): Promise<string> {
  await app.sql`
    insert into oauth_accounts (id, user_id, provider_id, provider_user_id, email, created_at)
    values (${randomUUID()}, ${userId}, ${provider}, ${subject}, 'linked@example.test', ${app.clock.now()})`;
  return subject;
}

async function deleted(tag: string): Promise<Person> {
  const p = await person(app, smtp, tag);
  await app.sql`update users set deleted_at = ${app.clock.now()} where id = ${p.id}`;
  return p;
}

describe('POST /applications/users/lookup', () => {
  it('answers the accounts found, each once, in the order first asked, with no email', async () => {
    const answer = await reader.api.applicationUsersLookup({
      body: { ids: [u1.id, u2.id, u1.id, randomUUID(), 'not-a-uuid', u2.id.toUpperCase()] },
    });
    expect(answer).toEqual({ users: [profile(u1.id, 'Ada Lovelace'), profile(u2.id, 'Grace Hopper')] });
    expect(answer.users.every((u) => !('email' in u))).toBe(true);
    // Asked the other way round, answered the other way round.
    expect(
      (await reader.api.applicationUsersLookup({ body: { ids: [u2.id, u1.id] } })).users.map((u) => u.id),
    ).toEqual([u2.id, u1.id]);
    expect(await reader.api.applicationUsersLookup({ body: { ids: [] } })).toEqual({ users: [] });
  });

  it('takes 100 distinct ids with repeats, and refuses 101 with 400 naming /ids', async () => {
    const hundred = [u1.id, ...Array.from({ length: 99 }, () => randomUUID())];
    const answer = await reader.api.applicationUsersLookup({
      body: { ids: [...hundred, ...hundred, u1.id] },
    });
    expect(answer.users.map((u) => u.id)).toEqual([u1.id]);
    const e = await refusal(reader.api.applicationUsersLookup({ body: { ids: [...hundred, randomUUID()] } }));
    expect([e.status, e.code, e.errors[0]?.pointer]).toEqual([400, 'invalid-field-value', '/ids']);
  });

  it('answers a deleted account with deleted_at set', async () => {
    const gone = await deleted('gone-lookup');
    expect(await reader.api.applicationUsersLookup({ body: { ids: [gone.id] } })).toEqual({
      users: [profile(gone.id, 'Test Person', app.clock.now().toISOString())],
    });
  });
});

describe('GET /applications/users/{id}', () => {
  it('answers the profile, never an email; a deleted account with deleted_at; an unknown id 404', async () => {
    const answer = await reader.api.applicationUserGet({ path: { id: u1.id } });
    expect(answer).toEqual(profile(u1.id, 'Ada Lovelace'));
    expect('email' in answer).toBe(false);
    const gone = await deleted('gone-get');
    expect(await reader.api.applicationUserGet({ path: { id: gone.id } })).toEqual(
      profile(gone.id, 'Test Person', app.clock.now().toISOString()),
    );
    expect(await outcome(reader.api.applicationUserGet({ path: { id: randomUUID() } }))).toEqual([
      404,
      'not-found',
    ]);
  });
});

describe('GET /applications/users/by-oauth-account', () => {
  it('answers the linked user; 404 for no such link and for a deleted user', async () => {
    const subject = await link(u1.id, 'github');
    expect(
      await reader.api.applicationUserByOauthAccount({
        query: { provider: 'github', provider_user_id: subject },
      }),
    ).toEqual({
      display_name: 'Ada Lovelace',
      language_tag: 'fr-CA',
      user_id: u1.id,
    });
    // The same subject at another provider is another account.
    expect(
      await outcome(
        reader.api.applicationUserByOauthAccount({
          query: { provider: 'google', provider_user_id: subject },
        }),
      ),
    ).toEqual([404, 'not-found']);
    expect(
      await outcome(
        reader.api.applicationUserByOauthAccount({
          query: { provider: 'github', provider_user_id: randomUUID() },
        }),
      ),
    ).toEqual([404, 'not-found']);

    const gone = await deleted('gone-linked');
    const goneSubject = await link(gone.id, 'github');
    expect(
      await outcome(
        reader.api.applicationUserByOauthAccount({
          query: { provider: 'github', provider_user_id: goneSubject },
        }),
      ),
    ).toEqual([404, 'not-found']);
  });
});

describe('refusals', () => {
  it('refuses an application without the capability (403 forbidden)', async () => {
    const subject = await link(u2.id, 'gitlab');
    expect(await outcome(bare.api.applicationUsersLookup({ body: { ids: [u1.id] } }))).toEqual([
      403,
      'forbidden',
    ]);
    expect(await outcome(bare.api.applicationUserGet({ path: { id: u1.id } }))).toEqual([403, 'forbidden']);
    expect(
      await outcome(
        profilesOnly.api.applicationUserByOauthAccount({
          query: { provider: 'gitlab', provider_user_id: subject },
        }),
      ),
    ).toEqual([403, 'forbidden']);
    // The same call with the capability answers, so the refusal above is the capability's.
    expect(
      await outcome(
        reader.api.applicationUserByOauthAccount({
          query: { provider: 'gitlab', provider_user_id: subject },
        }),
      ),
    ).toBe('ok');
  });

  it('refuses a user session, personal API tokens with any grants, and an acting-as request (403 forbidden)', async () => {
    const subject = await link(u1.id, 'discord');
    // A staff token carrying the very capabilities, admin-authorized: still not an application.
    const holder = await staff(app, smtp, 'reads-staff', ['manage_applications']);
    const { secret } = await holder.elevated.meApiTokenCreate({
      body: {
        name: 'reads',
        admin_authorized: true,
        authorization: {
          grants: [
            { capability: 'users.read.public', scope: { kind: 'all' } },
            { capability: 'users.lookup.oauth', scope: { kind: 'all' } },
          ],
        },
      },
    });
    const plainToken = await personalToken(app, u2, ['me.read', 'organizations.read']);
    await u2.api.meDelegationGrant({ body: { application_id: reader.id, capabilities: ['me.read'] } });
    const callers = {
      'user session': u2.api,
      'elevated staff session': holder.elevated,
      'staff API token': clientOf(app, secret),
      'plain API token': plainToken.api,
      'acting as': reader.api.actingAs(u2.id),
    };
    for (const [name, api] of Object.entries(callers)) {
      const got = [
        await outcome(api.applicationUsersLookup({ body: { ids: [u1.id] } })),
        await outcome(api.applicationUserGet({ path: { id: u1.id } })),
        await outcome(
          api.applicationUserByOauthAccount({ query: { provider: 'discord', provider_user_id: subject } }),
        ),
      ];
      expect([name, got]).toEqual([name, Array(3).fill([403, 'forbidden'])]);
    }
  });
});
