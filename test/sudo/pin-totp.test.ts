// Elevation by PIN and TOTP, the status, exit and disable, attempt limits across two API processes,
// and refresh carrying elevation forward (seed document 1, "Elevation of a session", "Elevation",
// "Authentication", "Limits").
import { createClient, type SvcClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { logIn, newAccount } from '../support/auth.js';
import { outcome, refusal } from '../support/refusal.js';
import { startSecondProcess, type SecondProcess } from '../support/second-process.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { base32Decode, RFC6238_VECTORS, totpAt } from '../support/totp.js';

let app: TestApp;
let smtp: TestSmtp;
const MIN = 60_000;
const HOUR = 60 * MIN;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const client = (token?: string, baseUrl = app.baseUrl) => createClient({ baseUrl, retries: 0, ...(token ? { token } : {}) });
const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, number | string>;

async function person(tag: string) {
  const account = await newAccount(app, smtp, tag);
  return { ...account, api: client(account.session.token), userId: account.session.user.id };
}

/** Moves the frozen clock for the duration of `fn`. */
async function later<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  app.clock.advance(ms);
  try {
    return await fn();
  } finally {
    app.clock.advance(-ms);
  }
}

/** A client with a fresh access token of the person's session (the frozen clock may have moved past 15 minutes). */
async function refreshed(p: { session: { refresh_token: string } }): Promise<SvcClient> {
  const next = await client().authRefresh({ body: { refresh_token: p.session.refresh_token } });
  p.session.refresh_token = next.refresh_token;
  return client(next.token);
}

const withoutRequestId = (e: { problem: unknown }) => ({ ...(e.problem as object), request_id: undefined });

describe('status', () => {
  it('reports nothing enrolled and not elevated for a new account, with the deployment methods', async () => {
    const { api } = await person('status');
    expect(await api.sudoStatusGet()).toEqual({
      is_elevated: false,
      elevated_until: null,
      available_methods: ['pin', 'totp', 'webauthn'],
      enrolled_methods: [],
    });
  });

  it('reports is_elevated false and a null deadline once the window passes', async () => {
    const { api, session } = await person('lapse');
    const { token, elevated_until } = await api.sudoSetup({ body: { pin: '482913' } });
    expect(await client(token).sudoStatusGet()).toMatchObject({ is_elevated: true, elevated_until });
    // 7.5 hours on, a refresh with the elevated token carries the window into a token valid one hour,
    // which outlives the window's end (8 hours) by half an hour.
    const carried = await later(7.5 * HOUR, () =>
      client(token).authRefresh({ body: { refresh_token: session.refresh_token } }),
    );
    expect(await later(7.5 * HOUR, () => client(carried.token).sudoStatusGet())).toMatchObject({
      is_elevated: true,
      elevated_until,
    });
    expect(await later(8 * HOUR + 1000, () => client(carried.token).sudoStatusGet())).toMatchObject({
      is_elevated: false,
      elevated_until: null,
    });
  });
});

describe('PIN', () => {
  it('sets up the first PIN without elevation and answers an elevated token (1 hour, elevated 8 hours)', async () => {
    const { api, session, userId } = await person('setup');
    const answer = await api.sudoSetup({ body: { pin: '123456' } });
    const c = claims(answer.token);
    const now = app.clock.now().getTime() / 1000;
    expect(c.exp).toBe(now + 3600);
    expect(c.elevated_until).toBe(now + 8 * 3600);
    expect(c.sid).toBe(session.session_id);
    expect(answer.elevated_until).toBe(new Date((now + 8 * 3600) * 1000).toISOString());
    // The presented token stays valid and un-elevated.
    expect(await api.sudoStatusGet()).toMatchObject({ is_elevated: false, enrolled_methods: ['pin'] });
    expect(await client(answer.token).sudoStatusGet()).toMatchObject({ is_elevated: true, elevated_until: answer.elevated_until });
    // The PIN is stored as an argon2id hash.
    const [row] = await app.sql<{ pin_hash: string }[]>`select pin_hash from elevation_factors where user_id = ${userId}`;
    expect(row!.pin_hash).toMatch(/^\$argon2id\$/);
    expect(row!.pin_hash).not.toContain('123456');
  });

  it('elevates with the right PIN and does not rotate the refresh token', async () => {
    const { api, session } = await person('elevate');
    await api.sudoSetup({ body: { pin: '246810' } });
    const tokensBefore = await app.sql`select id, spent_at from refresh_tokens where session_id = ${session.session_id}`;
    const answer = await api.sudoElevate({ body: { pin: '246810' } });
    expect(claims(answer.token).elevated_until).toBeTypeOf('number');
    expect(await app.sql`select id, spent_at from refresh_tokens where session_id = ${session.session_id}`).toEqual(tokensBefore);
  });

  it('answers a wrong PIN and no PIN identically', async () => {
    const withPin = await person('wrongpin');
    await withPin.api.sudoSetup({ body: { pin: '135790' } });
    const without = await person('nopin');
    const a = await refusal(withPin.api.sudoElevate({ body: { pin: '000000' } }));
    const b = await refusal(without.api.sudoElevate({ body: { pin: '000000' } }));
    expect([a.status, a.code]).toEqual([400, 'invalid-field-value']);
    expect(withoutRequestId(a)).toEqual(withoutRequestId(b));
  });

  it.each([['12345'], ['1234567'], ['12345a'], ['１２３４５６'], ['٠١٢٣٤٥'], [' 123456']])(
    'refuses %j as not six ASCII digits, storing nothing',
    async (pin) => {
      const { api, userId } = await person('pinshape');
      expect(await outcome(api.sudoSetup({ body: { pin } }))).toEqual([400, 'invalid-request']);
      expect(await app.sql`select 1 from elevation_factors where user_id = ${userId} and pin_hash is not null`).toHaveLength(0);
    },
  );

  it('needs an elevated session to replace the PIN once one exists', async () => {
    const { api } = await person('replace');
    const { token } = await api.sudoSetup({ body: { pin: '111111' } });
    expect(await outcome(api.sudoSetup({ body: { pin: '222222' } }))).toEqual([403, 'elevation-required']);
    expect(await outcome(api.sudoElevate({ body: { pin: '111111' } }))).toBe('ok');
    await client(token).sudoSetup({ body: { pin: '222222' } });
    expect(await outcome(api.sudoElevate({ body: { pin: '222222' } }))).toBe('ok');
    expect(await outcome(api.sudoElevate({ body: { pin: '111111' } }))).toEqual([400, 'invalid-field-value']);
  });

  it('allows five attempts per fifteen minutes; a success clears the count', async () => {
    const p = await person('limit');
    const { api } = p;
    await api.sudoSetup({ body: { pin: '314159' } });
    for (let i = 0; i < 4; i += 1) expect(await outcome(api.sudoElevate({ body: { pin: '000000' } }))).toEqual([400, 'invalid-field-value']);
    expect(await outcome(api.sudoElevate({ body: { pin: '314159' } }))).toBe('ok');
    for (let i = 0; i < 5; i += 1) expect(await outcome(api.sudoElevate({ body: { pin: '000000' } }))).toEqual([400, 'invalid-field-value']);
    // The sixth is refused before the PIN is even compared, right or not.
    const err = await refusal(api.sudoElevate({ body: { pin: '314159' } }));
    expect([err.status, err.code]).toEqual([429, 'rate-limited']);
    expect(err.retryAfter).toBeGreaterThan(0);
    const ok = await later(30 * MIN, async () => outcome((await refreshed(p)).sudoElevate({ body: { pin: '314159' } })));
    expect(ok).toBe('ok');
  });

  it('counts attempts across methods', async () => {
    const { api } = await person('across');
    await api.sudoSetup({ body: { pin: '271828' } });
    for (let i = 0; i < 3; i += 1) await outcome(api.sudoElevate({ body: { pin: '000000' } }));
    for (let i = 0; i < 2; i += 1) expect(await outcome(api.sudoTotpVerify({ body: { code: '000000' } }))).toEqual([400, 'invalid-field-value']);
    expect(await outcome(api.sudoElevate({ body: { pin: '271828' } }))).toEqual([429, 'rate-limited']);
  });

  it('locks the PIN after 100 consecutive failures until the next sign-in, and mails the owner', async () => {
    const p = await person('cap');
    const { email, password, userId } = p;
    await p.api.sudoSetup({ body: { pin: '161803' } });
    let offset = 0;
    let api = p.api;
    try {
      for (let i = 0; i < 100; i += 1) {
        if (i % 5 === 0) {
          // Each burst of five lands in a fresh window (and needs a fresh access token).
          app.clock.advance(31 * MIN);
          offset += 31 * MIN;
          api = await refreshed(p);
        }
        expect(await outcome(api.sudoElevate({ body: { pin: '000000' } }))).toEqual([400, 'invalid-field-value']);
      }
      app.clock.advance(31 * MIN);
      offset += 31 * MIN;
      api = await refreshed(p);
      const locked = await refusal(api.sudoElevate({ body: { pin: '161803' } }));
      expect([locked.status, locked.code, locked.detail]).toEqual([400, 'invalid-field-value', 'The PIN is not correct.']);
      const mail = await smtp.waitFor((m) => m.to.includes(email) && /locked/i.test(m.subject));
      expect(mail.text).toContain('100');
      // Signing in again lifts the lock.
      const fresh = await logIn(app, smtp, email, password);
      const again = client(fresh.token);
      expect(await outcome(again.sudoElevate({ body: { pin: '161803' } }))).toBe('ok');
      const [row] = await app.sql<{ consecutive_failures: number; pin_locked_at: Date | null }[]>`
        select consecutive_failures, pin_locked_at from elevation_factors where user_id = ${userId}`;
      expect(row).toEqual({ consecutive_failures: 0, pin_locked_at: null });
    } finally {
      app.clock.advance(-offset);
    }
  });
});

describe('attempts across two API processes', () => {
  let second: SecondProcess;
  let shared: TestApp;
  beforeAll(async () => {
    // The second process runs on real time, so this app's clock must too.
    shared = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
    shared.clock.followRealTime();
    second = await startSecondProcess(shared, { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' });
  }, 60_000);
  afterAll(async () => {
    await second.stop();
    await shared.close();
  });

  it('evaluates at most five of ten parallel wrong attempts', async () => {
    const { session } = await newAccount(shared, smtp, 'parallel');
    const here = createClient({ baseUrl: shared.baseUrl, token: session.token, retries: 0 });
    const there = createClient({ baseUrl: second.baseUrl, token: session.token, retries: 0 });
    await here.sudoSetup({ body: { pin: '999999' } });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => outcome((i % 2 ? there : here).sudoElevate({ body: { pin: '000000' } }))),
    );
    expect(results.filter((r) => Array.isArray(r) && r[0] === 400)).toHaveLength(5);
    expect(results.filter((r) => Array.isArray(r) && r[0] === 429)).toHaveLength(5);
    const [row] = await shared.sql<{ consecutive_failures: number }[]>`
      select consecutive_failures from elevation_factors where user_id = ${session.user.id}`;
    expect(row!.consecutive_failures).toBe(5);
  });

  it('accepts one TOTP code once, whichever process sees it first', async () => {
    const { session } = await newAccount(shared, smtp, 'totp-race');
    const here = createClient({ baseUrl: shared.baseUrl, token: session.token, retries: 0 });
    const there = createClient({ baseUrl: second.baseUrl, token: session.token, retries: 0 });
    const { secret } = await here.sudoTotpEnrollOptions();
    await here.sudoTotpEnroll({ body: { code: totpAt(secret, new Date()) } });
    // The enrolling step is spent; the next step's code is the first one verify may accept.
    const code = totpAt(secret, new Date(), 1);
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) => outcome((i % 2 ? there : here).sudoTotpVerify({ body: { code } }))),
    );
    expect(results.filter((r) => r === 'ok')).toHaveLength(1);
  });
});

describe('TOTP', () => {
  it('computes RFC 6238 reference vectors (the tests’ own TOTP)', () => {
    const secret = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'; // base32 of "12345678901234567890"
    expect(base32Decode(secret).toString()).toBe('12345678901234567890');
    for (const [t, code] of RFC6238_VECTORS) expect(totpAt(secret, new Date(t * 1000))).toBe(code);
  });

  it('enrolls with a code of the pending secret and elevates; the secret is sealed at rest', async () => {
    const { api, email, userId } = await person('totp');
    const options = await api.sudoTotpEnrollOptions();
    expect(options).toEqual({
      account: email,
      issuer: 'Hosting control plane',
      otpauth_url: expect.stringMatching(/^otpauth:\/\/totp\//),
      secret: expect.stringMatching(/^[A-Z2-7]{32}$/),
    });
    const url = new URL(options.otpauth_url);
    expect(url.searchParams.get('secret')).toBe(options.secret);
    expect(url.searchParams.get('issuer')).toBe('Hosting control plane');
    const answer = await api.sudoTotpEnroll({ body: { code: totpAt(options.secret, app.clock.now()) } });
    expect(await client(answer.token).sudoStatusGet()).toMatchObject({ is_elevated: true, enrolled_methods: ['totp'] });
    const [row] = await app.sql<{ totp_secret_sealed: string }[]>`
      select totp_secret_sealed from elevation_factors where user_id = ${userId}`;
    expect(row!.totp_secret_sealed).toMatch(/^v1\.[0-9a-f]{16}\./);
    expect(row!.totp_secret_sealed).not.toContain(options.secret);
    expect(JSON.stringify(await app.sql`select * from totp_pending`)).not.toContain(options.secret);
  });

  it('refuses a wrong code or an expired pending secret with the reason, enrolling nothing', async () => {
    const { api, userId } = await person('totp-bad');
    const { secret } = await api.sudoTotpEnrollOptions();
    const wrong = await refusal(api.sudoTotpEnroll({ body: { code: totpAt(secret, app.clock.now(), 5) } }));
    expect([wrong.status, wrong.code]).toEqual([400, 'invalid-field-value']);
    expect(wrong.detail).toMatch(/does not match/);
    const expired = await later(5 * MIN + 1000, () => refusal(api.sudoTotpEnroll({ body: { code: totpAt(secret, app.clock.now()) } })));
    expect([expired.status, expired.code]).toEqual([400, 'invalid-field-value']);
    expect(expired.detail).toMatch(/expired/);
    expect(await app.sql`select 1 from elevation_factors where user_id = ${userId} and totp_secret_sealed is not null`).toHaveLength(0);
    expect((await api.sudoStatusGet()).enrolled_methods).toEqual([]);
  });

  it('verifies a code once, with one step of drift, and answers used, wrong and no TOTP alike', async () => {
    const { api } = await person('totp-verify');
    const { secret } = await api.sudoTotpEnrollOptions();
    await api.sudoTotpEnroll({ body: { code: totpAt(secret, app.clock.now()) } });
    await later(2 * MIN, async () => {
      const now = app.clock.now();
      expect(await outcome(api.sudoTotpVerify({ body: { code: totpAt(secret, now, -1) } }))).toBe('ok');
      const used = await refusal(api.sudoTotpVerify({ body: { code: totpAt(secret, now, -1) } }));
      const wrong = await refusal(api.sudoTotpVerify({ body: { code: totpAt(secret, now, 3) } }));
      const none = await refusal((await person('no-totp')).api.sudoTotpVerify({ body: { code: totpAt(secret, now) } }));
      expect([used.status, used.code]).toEqual([400, 'invalid-field-value']);
      expect(withoutRequestId(used)).toEqual(withoutRequestId(wrong));
      expect(withoutRequestId(used)).toEqual(withoutRequestId(none));
      expect(await outcome(api.sudoTotpVerify({ body: { code: totpAt(secret, now, 1) } }))).toBe('ok');
      // An older step than the last accepted one is spent too.
      expect(await outcome(api.sudoTotpVerify({ body: { code: totpAt(secret, now) } }))).toEqual([400, 'invalid-field-value']);
    });
  });

  it('needs elevation to add TOTP once a PIN exists', async () => {
    const { api } = await person('totp-second');
    const { token } = await api.sudoSetup({ body: { pin: '121212' } });
    expect(await outcome(api.sudoTotpEnrollOptions())).toEqual([403, 'elevation-required']);
    expect(await outcome(api.sudoTotpEnroll({ body: { code: '123456' } }))).toEqual([403, 'elevation-required']);
    const { secret } = await client(token).sudoTotpEnrollOptions();
    await client(token).sudoTotpEnroll({ body: { code: totpAt(secret, app.clock.now()) } });
    expect((await api.sudoStatusGet()).enrolled_methods).toEqual(['pin', 'totp']);
  });
});

describe('exit and disable', () => {
  it('exit answers an un-elevated token of the same session', async () => {
    const { api, session } = await person('exit');
    const { token } = await api.sudoSetup({ body: { pin: '565656' } });
    const { token: plain } = await client(token).sudoExit();
    expect(claims(plain).elevated_until).toBeUndefined();
    expect(claims(plain).sid).toBe(session.session_id);
    expect(await client(plain).sudoStatusGet()).toMatchObject({ is_elevated: false, elevated_until: null });
  });

  it('disable needs an elevated session and removes the method', async () => {
    const { api } = await person('disable');
    const { token } = await api.sudoSetup({ body: { pin: '787878' } });
    expect(await outcome(api.sudoDisable({ body: { method: 'pin' } }))).toEqual([403, 'elevation-required']);
    expect((await api.sudoStatusGet()).enrolled_methods).toEqual(['pin']);
    await client(token).sudoDisable({ body: { method: 'pin' } });
    expect((await api.sudoStatusGet()).enrolled_methods).toEqual([]);
    // Removing what is not enrolled changes nothing.
    expect(await outcome(client(token).sudoDisable({ body: { method: 'totp' } }))).toBe('ok');
    expect(await outcome(api.sudoElevate({ body: { pin: '787878' } }))).toEqual([400, 'invalid-field-value']);
  });
});

describe('refresh carries elevation forward only with the elevated token', () => {
  it('keeps the window when the elevated (even expired) access token is sent along', async () => {
    const { api, session } = await person('carry');
    const { token, elevated_until } = await api.sudoSetup({ body: { pin: '909090' } });
    await later(2 * HOUR, async () => {
      // The elevated token (one hour) has expired; the window (eight hours) has not.
      expect(await outcome(client(token).sudoStatusGet())).toEqual([401, 'unauthenticated']);
      const refreshed = await client(token).authRefresh({ body: { refresh_token: session.refresh_token } });
      expect(new Date(Number(claims(refreshed.token).elevated_until) * 1000).toISOString()).toBe(elevated_until);
      expect(await client(refreshed.token).sudoStatusGet()).toMatchObject({ is_elevated: true, elevated_until });
    });
  });

  it('does not elevate a refresh without it, after the window, or with another session’s token', async () => {
    const a = await person('carry-no');
    const { token } = await a.api.sudoSetup({ body: { pin: '808080' } });
    const plain = await client().authRefresh({ body: { refresh_token: a.session.refresh_token } });
    expect(claims(plain.token).elevated_until).toBeUndefined();

    const b = await person('carry-late');
    const late = await b.api.sudoSetup({ body: { pin: '707070' } });
    const after = await later(8 * HOUR + 1000, () =>
      client(late.token).authRefresh({ body: { refresh_token: b.session.refresh_token } }),
    );
    expect(claims(after.token).elevated_until).toBeUndefined();

    const c = await person('carry-other');
    const foreign = await client(token).authRefresh({ body: { refresh_token: c.session.refresh_token } });
    expect(claims(foreign.token).elevated_until).toBeUndefined();
  });
});

describe('available methods come from configuration', () => {
  let pinOnly: TestApp;
  beforeAll(async () => {
    pinOnly = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', ELEVATION_METHODS: 'pin' } });
  });
  afterAll(() => pinOnly.close());

  it('lists only the configured methods and refuses the others', async () => {
    const { session } = await newAccount(pinOnly, smtp, 'pin-only');
    const api: SvcClient = createClient({ baseUrl: pinOnly.baseUrl, token: session.token, retries: 0 });
    expect((await api.sudoStatusGet()).available_methods).toEqual(['pin']);
    expect(await outcome(api.sudoTotpEnrollOptions())).toEqual([403, 'forbidden']);
    expect(await outcome(api.sudoTotpVerify({ body: { code: '123456' } }))).toEqual([403, 'forbidden']);
    expect(await outcome(api.sudoSetup({ body: { pin: '123456' } }))).toBe('ok');
  });
});
