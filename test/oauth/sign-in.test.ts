// Signing up and in with an OpenID provider (document 1, "OAuth"; DECISIONS.md §4): a real provider
// on loopback (oidc-provider), the browser played with fetch, nothing mocked between the two. The
// provider list per host, sign-up and sign-in by issuer + subject, the completion key, every callback
// error, replayed and expired states, redirect_to tricks, and a provider that is down.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_BASE_PATH } from '../../server/src/spec.js';
import { newAccount } from '../support/auth.js';
import { startTestIdp, type TestIdp } from '../support/oidc.js';
import { outcome, refusal } from '../support/refusal.js';
import {
  arrive,
  callbackPath,
  CLI_CALLBACK,
  counts,
  DASHBOARD_CALLBACK,
  flow,
  getWithHost,
  oauthSignIn,
  PUBLIC_BASE_URL,
  RESELLER_HOST,
  startWorld,
  toCallback,
  type World,
} from './harness.js';

let w: World;
/** Configured, but never answering: its issuer's port is closed before the first flow. */
let down: TestIdp;
/** Answers discovery, then goes down between start and callback. */
let flaky: TestIdp;

beforeAll(async () => {
  down = await startTestIdp({ redirectUris: [`${PUBLIC_BASE_URL}${callbackPath('down')}`] });
  flaky = await startTestIdp({ redirectUris: [`${PUBLIC_BASE_URL}${callbackPath('flaky')}`] });
  const entry = (id: string, p: TestIdp) => ({
    id,
    display_name: null,
    issuer: p.issuer,
    client_id: p.clientId,
    client_secret: p.clientSecret,
  });
  w = await startWorld({ providers: [entry('down', down), entry('flaky', flaky)] });
  await down.close();
}, 60_000);
afterAll(async () => {
  await w?.close();
  await flaky?.close();
});

let subjects = 0;
/** A provider account with a verified address of its own. */
function person(
  claims: Partial<{ email: string | null; email_verified: boolean; name: string }> = {},
  idp = w.idp,
) {
  const subject = `sub-${(subjects += 1)}-${randomUUID().slice(0, 8)}`;
  const email = `${subject}@idp.example.test`;
  idp.accounts.set(subject, { email, email_verified: true, name: 'Ada Lovelace', ...claims });
  return { subject, email: claims.email ?? email };
}

const userOf = async (email: string) =>
  (
    await w.app.sql<
      {
        id: string;
        email_verified_at: Date | null;
        password_hash: string | null;
        referral_code: string | null;
        reseller_id: string | null;
      }[]
    >`
    select id, email_verified_at, password_hash, referral_code, reseller_id from users where email = ${email}`
  )[0];

describe('the providers offered', () => {
  it('on the platform: the providers without hosts, with their display names', async () => {
    expect(await w.anon.oauthProviderList()).toEqual([
      { id: 'idp', display_name: 'Test Identity' },
      { id: 'spare', display_name: null },
      { id: 'down', display_name: null },
      { id: 'flaky', display_name: null },
    ]);
  });

  it("on a reseller's hostname: only the providers that list it; a reseller with none: none", async () => {
    expect(await getWithHost(w.app, '/auth/oauth/providers', RESELLER_HOST)).toEqual({
      status: 200,
      body: [{ id: 'shop-only', display_name: null }],
    });
    await w.app.sql`
      insert into resellers (id, name, hostname, brand_color, og_image_mode, created_at)
      values (${randomUUID()}, 'Quiet', 'quiet.reseller.test', '#123456', 'platform', ${w.app.clock.now()})`;
    expect(await getWithHost(w.app, '/auth/oauth/providers', 'quiet.reseller.test')).toEqual({
      status: 200,
      body: [],
    });
  });

  it('starts only a provider offered on the host: 404 elsewhere, nothing started', async () => {
    const before = await counts(w.app);
    const query = `redirect_to=${encodeURIComponent(DASHBOARD_CALLBACK)}`;
    expect(
      await outcome(
        w.anon.oauthSignInStart({
          path: { provider: 'shop-only' },
          query: { redirect_to: DASHBOARD_CALLBACK },
        }),
      ),
    ).toEqual([404, 'not-found']);
    expect((await getWithHost(w.app, `/auth/oauth/idp/start?${query}`, RESELLER_HOST)).status).toBe(404);
    expect(
      await outcome(
        w.anon.oauthSignInStart({ path: { provider: 'nobody' }, query: { redirect_to: DASHBOARD_CALLBACK } }),
      ),
    ).toEqual([404, 'not-found']);
    expect(await counts(w.app)).toEqual(before);
  });
});

describe('sign-up and sign-in', () => {
  it('a new identity with a verified address makes an account, its personal organization and a session', async () => {
    const p = person({ name: 'Grace Hopper' });
    const start = await w.anon.oauthSignInStart({
      path: { provider: 'idp' },
      query: { redirect_to: DASHBOARD_CALLBACK },
    });
    const authorize = new URL(start.redirect_to);
    expect(authorize.origin).toBe(w.idp.issuer);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      client_id: w.idp.clientId,
      response_type: 'code',
      redirect_uri: `${PUBLIC_BASE_URL}${API_BASE_PATH}/auth/oauth/idp/callback`,
      code_challenge_method: 'S256',
      scope: 'openid email profile',
    });
    expect(authorize.searchParams.get('state')).toBeTruthy();
    expect(authorize.searchParams.get('nonce')).toBeTruthy();
    const answer = await arrive(w.app, await w.idp.authorize(start.redirect_to, { subject: p.subject }));
    expect(answer.status).toBe(307);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const back = answer.location!;
    expect(`${back.origin}${back.pathname}`).toBe(DASHBOARD_CALLBACK);
    expect([...back.searchParams.keys()]).toEqual(['key']);

    const session = await w.anon.oauthComplete({ body: { key: back.searchParams.get('key')! } });
    expect(session.user).toMatchObject({ name: 'Grace Hopper', email: p.email, language: 'en' });
    const row = await userOf(p.email);
    expect(row).toMatchObject({ id: session.user.id, password_hash: null });
    expect(row!.email_verified_at).not.toBeNull();
    const [org] = await w.app.sql`select id from organizations where personal_owner_id = ${session.user.id}`;
    expect(org).toBeDefined();
    // The same session object as a password sign-in: it works.
    const me = await fetch(`${w.app.baseUrl}${API_BASE_PATH}/me`, {
      headers: { authorization: `Bearer ${session.token}` },
    });
    expect(me.status).toBe(200);
    const [link] = await w.app
      .sql`select issuer, provider_user_id, provider_id, email from oauth_accounts where user_id = ${session.user.id}`;
    expect(link).toEqual({
      issuer: w.idp.issuer,
      provider_user_id: p.subject,
      provider_id: 'idp',
      email: p.email,
    });
  });

  it('the same identity signs in to the same account, also after its address changed at the provider', async () => {
    const p = person();
    const first = await oauthSignIn(w, p.subject);
    const renamed = `renamed-${p.subject}@idp.example.test`;
    w.idp.accounts.set(p.subject, { ...w.idp.accounts.get(p.subject), email: renamed });
    const before = await counts(w.app);
    const second = await oauthSignIn(w, p.subject);
    expect(second.user.id).toBe(first.user.id);
    expect(second.session_id).not.toBe(first.session_id);
    // No new account; the account keeps its own address; the link shows the provider's new one.
    const after = await counts(w.app);
    expect({ users: after.users, links: after.links }).toEqual({ users: before.users, links: before.links });
    expect(second.user.email).toBe(p.email);
    const [link] = await w.app.sql`select email from oauth_accounts where user_id = ${first.user.id}`;
    expect(link!.email).toBe(renamed);
  });

  it('records referral_code only when the account is created, and it never changes the answer', async () => {
    const p = person();
    const made = await oauthSignIn(w, p.subject, { referral_code: 'FRIEND-42' });
    expect((await userOf(p.email))!.referral_code).toBe('FRIEND-42');
    const again = await oauthSignIn(w, p.subject, { referral_code: 'SOMEONE-ELSE' });
    expect(again.user.id).toBe(made.user.id);
    expect((await userOf(p.email))!.referral_code).toBe('FRIEND-42');
    expect(Object.keys(again).sort()).toEqual(Object.keys(made).sort());
  });

  it('attributes a new account to the reseller named at start; a paused reseller answers reseller_paused', async () => {
    const live = randomUUID();
    const paused = randomUUID();
    const now = w.app.clock.now();
    await w.app.sql`
      insert into resellers (id, name, hostname, brand_color, og_image_mode, enabled, created_at)
      values (${live}, 'Live', ${`live-${live}.test`}, '#123456', 'platform', true, ${now}),
             (${paused}, 'Paused', ${`paused-${paused}.test`}, '#123456', 'platform', false, ${now})`;
    const p = person();
    await oauthSignIn(w, p.subject, { reseller_id: live });
    expect((await userOf(p.email))!.reseller_id).toBe(live);

    const q = person();
    const callback = await toCallback(w, q.subject, { query: { reseller_id: paused, referral_code: 'X' } });
    const before = await counts(w.app);
    const answer = await arrive(w.app, callback);
    expect(answer.location!.searchParams.get('error')).toBe('reseller_paused');
    expect(answer.location!.searchParams.has('key')).toBe(false);
    expect(await counts(w.app)).toEqual(before);
    expect(await userOf(q.email)).toBeUndefined();
  });

  it('refuses an unknown reseller at start, starting nothing', async () => {
    const before = await counts(w.app);
    const e = await refusal(
      w.anon.oauthSignInStart({
        path: { provider: 'idp' },
        query: { redirect_to: DASHBOARD_CALLBACK, reseller_id: randomUUID() },
      }),
    );
    expect([e.status, e.code]).toEqual([400, 'invalid-field-value']);
    expect(await counts(w.app)).toEqual(before);
  });
});

describe('callback errors', () => {
  it('email_conflict: a new identity whose verified address another account holds is not linked to it', async () => {
    const { email, session } = await newAccount(w.app, w.smtp, 'conflict');
    const p = person({ email: email.toUpperCase() });
    const callback = await toCallback(w, p.subject);
    const before = await counts(w.app);
    const answer = await arrive(w.app, callback);
    expect(answer.status).toBe(307);
    expect(answer.location!.searchParams.get('error')).toBe('email_conflict');
    expect(await counts(w.app)).toEqual(before);
    expect(await w.app.sql`select 1 from oauth_accounts where user_id = ${session.user.id}`).toHaveLength(0);
  });

  it('email_required: no address, or one the provider did not verify', async () => {
    for (const claims of [{ email: null }, { email_verified: false }]) {
      const p = person(claims);
      const callback = await toCallback(w, p.subject);
      const before = await counts(w.app);
      const answer = await arrive(w.app, callback);
      expect(answer.location!.searchParams.get('error'), JSON.stringify(claims)).toBe('email_required');
      expect(await counts(w.app)).toEqual(before);
    }
  });

  it('login_failed: refused at the provider (error, no code)', async () => {
    const callback = await toCallback(w, { deny: true });
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.has('code')).toBe(false);
    const before = await counts(w.app);
    const answer = await arrive(w.app, callback);
    expect(answer.status, JSON.stringify(answer.body)).toBe(307);
    expect(answer.location!.searchParams.get('error')).toBe('login_failed');
    expect(await counts(w.app)).toEqual(before);
  });

  it('login_failed: an iss that is not the provider’s (RFC 9207 mix-up defence)', async () => {
    const p = person();
    const callback = await toCallback(w, p.subject);
    callback.searchParams.set('iss', w.spare.issuer);
    const before = await counts(w.app);
    const answer = await arrive(w.app, callback);
    expect(answer.location!.searchParams.get('error')).toBe('login_failed');
    expect(await counts(w.app)).toEqual(before);
  });

  it('answers 200 {redirect_to} instead of the redirect when asked for JSON and not HTML', async () => {
    const p = person();
    const callback = await toCallback(w, p.subject);
    const answer = await arrive(w.app, callback, 'application/json');
    expect(answer.status).toBe(200);
    expect(answer.location).toBeNull();
    const target = new URL((answer.body as { redirect_to: string }).redirect_to);
    expect(await w.anon.oauthComplete({ body: { key: target.searchParams.get('key')! } })).toHaveProperty(
      'token',
    );
    // Both named: a browser navigation; it gets the redirect.
    const q = person();
    expect((await arrive(w.app, await toCallback(w, q.subject), 'text/html, application/json')).status).toBe(
      307,
    );
  });

  it('needs state, and code unless the provider sent error; ignores what providers add', async () => {
    const p = person();
    const callback = await toCallback(w, p.subject);
    const without = (name: string) => {
      const u = new URL(callback);
      u.searchParams.delete(name);
      return u;
    };
    const before = await counts(w.app);
    const noState = await arrive(w.app, without('state'));
    expect([noState.status, noState.code, noState.location]).toEqual([400, 'invalid-request', null]);
    const noCode = await arrive(w.app, without('code'));
    expect([noCode.status, noCode.code, noCode.location]).toEqual([400, 'invalid-field-value', null]);
    expect(await counts(w.app)).toEqual(before);
    // The flow was not spent by those: with the parameters providers add, it completes.
    const added = new URL(callback);
    added.searchParams.set('session_state', 'abc.def');
    added.searchParams.set('error_description', 'ignored');
    added.searchParams.set('scope', 'openid email profile');
    added.searchParams.set('authuser', '0');
    const answer = await arrive(w.app, added);
    expect(answer.status, JSON.stringify(answer.body)).toBe(307);
    expect(answer.location!.searchParams.get('key')).toBeTruthy();
  });
});

describe('state and completion key', () => {
  it('a state is single use: the callback replayed signs nobody in again', async () => {
    const p = person();
    const callback = await toCallback(w, p.subject);
    const first = await arrive(w.app, callback);
    expect(first.location!.searchParams.get('key')).toBeTruthy();
    const before = await counts(w.app);
    const replay = await arrive(w.app, callback);
    expect(replay.status).toBe(307);
    expect(Object.fromEntries(replay.location!.searchParams)).toEqual({ error: 'login_failed' });
    expect(await counts(w.app)).toEqual(before);
  });

  it('a state expires: a callback after 10 minutes is login_failed', async () => {
    const p = person();
    const callback = await toCallback(w, p.subject);
    w.app.clock.advance(10 * 60_000 + 1000);
    const before = await counts(w.app);
    const answer = await arrive(w.app, callback);
    expect(answer.location!.searchParams.get('error')).toBe('login_failed');
    expect(await counts(w.app)).toEqual(before);
  });

  it("an unknown state, or another provider's, is 400 with no redirect and spends nothing", async () => {
    const p = person();
    const callback = await toCallback(w, p.subject);
    const forged = new URL(callback);
    forged.searchParams.set('state', 'not-a-state-we-issued');
    const elsewhere = new URL(callback);
    elsewhere.pathname = callbackPath('spare');
    const before = await counts(w.app);
    for (const url of [forged, elsewhere]) {
      const answer = await arrive(w.app, url);
      expect([answer.status, answer.code, answer.location], url.href).toEqual([
        400,
        'invalid-field-value',
        null,
      ]);
    }
    expect(await counts(w.app)).toEqual(before);
    expect((await arrive(w.app, callback)).location!.searchParams.get('key')).toBeTruthy();
  });

  it('a completion key is single use and short-lived; unknown, spent and expired keys are one refusal', async () => {
    const p = person();
    const key = (await flow(w, p.subject)).searchParams.get('key')!;
    await w.anon.oauthComplete({ body: { key } });
    const stale = (await flow(w, p.subject)).searchParams.get('key')!;
    w.app.clock.advance(2 * 60_000 + 1000);
    const before = await counts(w.app);
    const answers = [];
    for (const k of [key, stale, 'never-issued']) {
      const res = await fetch(`${w.app.baseUrl}${API_BASE_PATH}/auth/oauth/complete`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'same' },
        body: JSON.stringify({ key: k }),
      });
      answers.push([res.status, await res.text()]);
    }
    expect(answers[0]![0]).toBe(401);
    expect(JSON.parse(answers[0]![1] as string)).toMatchObject({ code: 'invalid-credentials' });
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    expect(await counts(w.app)).toEqual(before);
  });
});

describe('redirect_to', () => {
  const tricks: [string, string][] = [
    ['a longer path', `${DASHBOARD_CALLBACK}/evil`],
    ['a suffix', `${DASHBOARD_CALLBACK}x`],
    ['a query', `${DASHBOARD_CALLBACK}?next=https://evil.example`],
    ['a fragment', `${DASHBOARD_CALLBACK}#x`],
    ['a trailing slash', `${DASHBOARD_CALLBACK}/`],
    ['upper-case scheme', DASHBOARD_CALLBACK.replace('http:', 'HTTP:')],
    ['upper-case host', DASHBOARD_CALLBACK.replace('platform.test', 'Platform.test')],
    ['upper-case path', DASHBOARD_CALLBACK.replace('/auth/callback', '/Auth/Callback')],
    ['userinfo', DASHBOARD_CALLBACK.replace('http://', 'http://evil@')],
    ['the host as userinfo', 'http://platform.test@evil.example/auth/callback'],
    ['a backslash', 'http://platform.test\\@evil.example/auth/callback'],
    ['backslashes for slashes', 'http:\\\\platform.test\\auth\\callback'],
    ['an encoded slash', 'http://platform.test/auth%2Fcallback'],
    ['an encoded letter', 'http://platform.test/auth/%63allback'],
    ['an encoded dot in the host', 'http://platform%2Etest/auth/callback'],
    ['an explicit port', 'http://platform.test:80/auth/callback'],
    ['a trailing dot in the host', 'http://platform.test./auth/callback'],
    ['another scheme', DASHBOARD_CALLBACK.replace('http:', 'https:')],
    ['scheme-relative', '//platform.test/auth/callback'],
    ['a leading space', ` ${DASHBOARD_CALLBACK}`],
    ['another origin', 'https://evil.example/auth/callback'],
  ];

  it.each(tricks)(
    'refuses %s with 400 and starts nothing, to sign in or to link',
    async (_name, redirectTo) => {
      const { session } = await signedInOnce();
      const before = await counts(w.app);
      const signIn = await refusal(
        w.anon.oauthSignInStart({ path: { provider: 'idp' }, query: { redirect_to: redirectTo } }),
      );
      expect([signIn.status, signIn.code]).toEqual([400, 'invalid-field-value']);
      const res = await fetch(
        `${w.app.baseUrl}${API_BASE_PATH}/auth/oauth/link/idp/start?redirect_to=${encodeURIComponent(redirectTo)}`,
        { headers: { authorization: `Bearer ${session.token}` }, redirect: 'manual' },
      );
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(((await res.json()) as { code: string }).code).toBe('invalid-field-value');
      expect(await counts(w.app)).toEqual(before);
    },
  );

  it('accepts each allowlist entry exactly, and the callback goes back to the one the flow named', async () => {
    const p = person();
    const back = await flow(w, p.subject, { redirectTo: CLI_CALLBACK });
    expect(`${back.origin}${back.pathname}`).toBe(CLI_CALLBACK);
    expect(back.searchParams.get('key')).toBeTruthy();
  });
});

let once: Promise<{ session: { token: string } }> | null = null;
const signedInOnce = () => (once ??= newAccount(w.app, w.smtp, 'tricks'));

describe('a provider that is down', () => {
  it('at start: the browser goes straight back with login_failed; nothing is started, no 5xx', async () => {
    const before = await counts(w.app);
    const started = await w.anon.oauthSignInStart({
      path: { provider: 'down' },
      query: { redirect_to: DASHBOARD_CALLBACK },
    });
    const back = new URL(started.redirect_to);
    expect(`${back.origin}${back.pathname}`).toBe(DASHBOARD_CALLBACK);
    expect(Object.fromEntries(back.searchParams)).toEqual({ error: 'login_failed' });
    expect(await counts(w.app)).toEqual(before);
  });

  it('between start and callback: the code cannot be redeemed, login_failed, no 5xx', async () => {
    const subject = 'flaky-person';
    flaky.accounts.set(subject, { email: 'flaky@idp.example.test', email_verified: true });
    const started = await w.anon.oauthSignInStart({
      path: { provider: 'flaky' },
      query: { redirect_to: DASHBOARD_CALLBACK },
    });
    const callback = await flaky.authorize(started.redirect_to, { subject });
    await flaky.close();
    const before = await counts(w.app);
    const answer = await arrive(w.app, callback);
    expect(answer.status).toBe(307);
    expect(answer.location!.searchParams.get('error')).toBe('login_failed');
    expect(await counts(w.app)).toEqual(before);
  });
});
