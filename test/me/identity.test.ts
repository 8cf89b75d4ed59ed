// GET/PATCH /me, onboarding and the discovery ledger (seed document 1, "Caller identity", "Identity",
// "Discovery ledger", "Onboarding", "Limits").
import { createClient, type SvcClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { newAccount } from '../support/auth.js';
import { outcome, refusal } from '../support/refusal.js';
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

async function signedIn(tag: string): Promise<{ api: SvcClient; userId: string; email: string }> {
  const { session, email } = await newAccount(app, smtp, tag);
  return { api: createClient({ baseUrl: app.baseUrl, token: session.token, retries: 0 }), userId: session.user.id, email };
}

const row = async (userId: string) => {
  const [r] = await app.sql<{ name: string; language: string; billing_country_code: string | null; is_onboarded: boolean; updated_at: Date }[]>`
    select name, language, billing_country_code, is_onboarded, updated_at from users where id = ${userId}`;
  return r!;
};

describe('GET /me', () => {
  it('answers the identity of the caller', async () => {
    const { api, userId, email } = await signedIn('me');
    const me = await api.meGet();
    expect(me).toEqual({
      id: userId,
      created_at: expect.stringMatching(/Z$/),
      name: 'Test Person',
      language: 'en',
      is_onboarded: false,
      chat_notifications_enabled: false,
      system_permissions: [],
      avatar_asset_id: null,
      billing_country_code: null,
      email,
    });
  });

  it('refuses without a session', async () => {
    expect(await outcome(createClient({ baseUrl: app.baseUrl, retries: 0 }).meGet())).toEqual([401, 'unauthenticated']);
  });

  it('shows system permissions, the whole meaning of staff', async () => {
    const { api, userId } = await signedIn('staff');
    await app.sql`update users set system_permissions = '{manage_users,view_all_orders}' where id = ${userId}`;
    expect((await api.meGet()).system_permissions).toEqual(['manage_users', 'view_all_orders']);
  });
});

describe('PATCH /me', () => {
  it('changes only the fields given; omitted and null fields stay', async () => {
    const { api, userId } = await signedIn('patch');
    const a = await api.meUpdate({ body: { name: '  Grace Hopper ', language: 'de-AT' } });
    expect(a).toMatchObject({ name: 'Grace Hopper', language: 'de-AT', chat_notifications_enabled: false });
    const b = await api.meUpdate({ body: { chat_notifications_enabled: true, name: null } });
    expect(b).toMatchObject({ name: 'Grace Hopper', language: 'de-AT', chat_notifications_enabled: true });
    const c = await api.meUpdate({ body: {} });
    expect(c).toEqual(b);
    expect((await row(userId)).name).toBe('Grace Hopper');
  });

  it.each([
    ['too short', 'A'],
    ['too long', 'x'.repeat(65)],
    ['wrongly shaped: leading punctuation', '-Ada'],
    ['wrongly shaped: a control character', 'Ada\u0007Lovelace'],
    ['wrongly shaped: markup', '<script>'],
    ['wrongly shaped: two spaces', 'Ada  Lovelace'],
    ['offensive', 'fuck this'],
    ['offensive, disguised', 'Sh1t head'],
  ])('refuses a name that is %s, changing nothing', async (_why, name) => {
    const { api, userId } = await signedIn('badname');
    const before = await row(userId);
    const err = await refusal(api.meUpdate({ body: { name, language: 'fr' } }));
    expect([err.status, err.code]).toEqual([400, 'invalid-field-value']);
    expect(err.errors[0]).toMatchObject({ location: 'body', pointer: '/name' });
    expect(await row(userId)).toEqual(before);
  });

  it.each([['José Álvarez-Núñez'], ["Seán O'Brien"], ['李小龍'], ['Dick Van Dyke'], ['Scunthorpe United']])(
    'accepts the real name %s',
    async (name) => {
      const { api } = await signedIn('goodname');
      expect((await api.meUpdate({ body: { name } })).name).toBe(name);
    },
  );

  it('refuses a language that is not tag-shaped and unknown fields', async () => {
    const { api, userId } = await signedIn('lang');
    const before = await row(userId);
    expect(await outcome(api.meUpdate({ body: { language: 'en_US!' } }))).toEqual([400, 'invalid-request']);
    expect(await outcome(api.meUpdate({ body: { email: 'x@example.com' } as never }))).toEqual([400, 'invalid-request']);
    expect(await row(userId)).toEqual(before);
  });

  it('takes a billing country case-insensitively from the real list', async () => {
    const { api, userId } = await signedIn('country');
    expect((await api.meUpdate({ body: { billing_country_code: 'at' } })).billing_country_code).toBe('AT');
    // Before onboarding it may still change.
    expect((await api.meUpdate({ body: { billing_country_code: 'De' } })).billing_country_code).toBe('DE');
    for (const code of ['XX', 'EU', 'UK', 'ZZ']) {
      const err = await refusal(api.meUpdate({ body: { billing_country_code: code } }));
      expect([err.status, err.code, err.errors[0]?.pointer]).toEqual([400, 'invalid-field-value', '/billing_country_code']);
    }
    expect(await outcome(api.meUpdate({ body: { billing_country_code: 'DEU' } }))).toEqual([400, 'invalid-request']);
    expect((await row(userId)).billing_country_code).toBe('DE');
  });

  it('refuses another billing country once onboarding is complete and one is stored', async () => {
    const { api, userId } = await signedIn('locked');
    await api.meUpdate({ body: { billing_country_code: 'FR' } });
    await api.meOnboardingComplete();
    const before = await row(userId);
    expect(await outcome(api.meUpdate({ body: { billing_country_code: 'IT', name: 'New Name' } }))).toEqual([
      422,
      'billing-country-already-set',
    ]);
    expect(await row(userId)).toEqual(before);
    // The same country changes nothing and is accepted.
    expect((await api.meUpdate({ body: { billing_country_code: 'fr' } })).billing_country_code).toBe('FR');
  });

  it('lets an onboarded account without a country set one', async () => {
    const { api } = await signedIn('late');
    await api.meOnboardingComplete();
    expect((await api.meUpdate({ body: { billing_country_code: 'NL' } })).billing_country_code).toBe('NL');
    expect(await outcome(api.meUpdate({ body: { billing_country_code: 'BE' } }))).toEqual([422, 'billing-country-already-set']);
  });
});

describe('POST /me/complete-onboarding', () => {
  it('onboards once; a second call is 422 and changes nothing', async () => {
    const { api, userId } = await signedIn('onboard');
    const me = await api.meOnboardingComplete();
    expect(me.is_onboarded).toBe(true);
    const before = await row(userId);
    expect(await outcome(api.meOnboardingComplete())).toEqual([422, 'onboarding-already-completed']);
    expect(await row(userId)).toEqual(before);
  });

  it('issues no new token: the answer is the identity alone', async () => {
    const { api } = await signedIn('notoken');
    const res = await api.raw.POST('/me/complete-onboarding');
    expect(Object.keys(res.data ?? {})).not.toContain('token');
  });

  it('onboards once under concurrent calls', async () => {
    const { api } = await signedIn('onboard-race');
    const results = await Promise.all(Array.from({ length: 6 }, () => outcome(api.meOnboardingComplete())));
    expect(results.filter((r) => r === 'ok')).toHaveLength(1);
    expect(results.filter((r) => r !== 'ok')).toEqual(Array(5).fill([422, 'onboarding-already-completed']));
  });
});

describe('discovery ledger', () => {
  it('answers {seen: {}} for an account with no record, never 404', async () => {
    const { api } = await signedIn('disc-empty');
    expect(await api.meDiscoveryGet()).toEqual({ seen: {} });
  });

  it('records first sightings and keeps the first time on re-marking', async () => {
    const { api } = await signedIn('disc');
    await api.meDiscoveryMark({ body: { keys: ['nav:projects', 'tab:billing/invoices', 'nav:projects'] } });
    const first = await api.meDiscoveryGet();
    expect(first.seen).toEqual({ 'nav:projects': '2026-11-21T12:00:00.000Z', 'tab:billing/invoices': '2026-11-21T12:00:00.000Z' });
    app.clock.advance(60_000);
    try {
      await api.meDiscoveryMark({ body: { keys: ['nav:projects', 'product:vps-small_2'] } });
    } finally {
      app.clock.advance(-60_000);
    }
    expect((await api.meDiscoveryGet()).seen).toEqual({
      'nav:projects': '2026-11-21T12:00:00.000Z',
      'tab:billing/invoices': '2026-11-21T12:00:00.000Z',
      'product:vps-small_2': '2026-11-21T12:01:00.000Z',
    });
  });

  it.each([
    ['an unknown kind', 'page:home'],
    ['upper case', 'nav:Projects'],
    ['no path', 'nav:'],
    ['a space', 'ui:side bar'],
    ['too long', `ui:${'a'.repeat(94)}`],
    ['a dot', 'ui:a.b'],
  ])('refuses the whole call for %s, naming the key, writing nothing', async (_why, key) => {
    const { api } = await signedIn('disc-bad');
    const err = await refusal(api.meDiscoveryMark({ body: { keys: ['nav:ok', key, 'ui:fine'] } }));
    expect([err.status, err.code]).toEqual([400, 'invalid-field-value']);
    expect(err.detail).toContain(JSON.stringify(key));
    expect(err.errors[0]).toMatchObject({ location: 'body', pointer: '/keys/1' });
    expect(await api.meDiscoveryGet()).toEqual({ seen: {} });
  });

  it('accepts 20 keys and refuses 21, writing nothing', async () => {
    const { api } = await signedIn('disc-many');
    const keys = Array.from({ length: 21 }, (_, i) => `ui:k${i}`);
    expect(await outcome(api.meDiscoveryMark({ body: { keys } }))).toEqual([400, 'invalid-request']);
    expect(await api.meDiscoveryGet()).toEqual({ seen: {} });
    await api.meDiscoveryMark({ body: { keys: keys.slice(0, 20) } });
    expect(Object.keys((await api.meDiscoveryGet()).seen)).toHaveLength(20);
  });

  it('accepts a key of exactly 96 characters', async () => {
    const { api } = await signedIn('disc-96');
    const key = `ui:${'a'.repeat(93)}`;
    await api.meDiscoveryMark({ body: { keys: [key] } });
    expect(Object.keys((await api.meDiscoveryGet()).seen)).toEqual([key]);
  });

  it('limits a caller to about 30 calls a minute', async () => {
    const { api } = await signedIn('disc-rate');
    const results = [];
    for (let i = 0; i < 32; i += 1) results.push(await outcome(api.meDiscoveryMark({ body: { keys: ['ui:x'] } })));
    expect(results.slice(0, 30).every((r) => r === 'ok')).toBe(true);
    expect(results[31]).toEqual([429, 'rate-limited']);
    // Another caller is not affected.
    const other = await signedIn('disc-rate-2');
    expect(await outcome(other.api.meDiscoveryMark({ body: { keys: ['ui:x'] } }))).toBe('ok');
  });
});
