// Sign-in end to end: signup → verify → login → mailed code → session, over real SMTP, and every
// refusal of the way checked to change nothing.
import { createClient, SvcApiError } from '@svcplatform/sdk';
import argon2 from 'argon2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { codeIn, logIn, newAccount, signUp, tokenIn, uniqueEmail } from '../support/auth.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let anon: ReturnType<typeof createClient>;
const PASSWORD = 'correct horse battery staple';

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  anon = createClient({ baseUrl: app.baseUrl, retries: 0 });
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

async function refusal(p: Promise<unknown>): Promise<SvcApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof SvcApiError)) throw new Error(`expected a refusal, got ${String(err)}`);
  return err;
}

const userRow = async (email: string) => {
  const [row] = await app.sql<{ id: string; password_hash: string | null; email_verified_at: Date | null; name: string }[]>`
    select id, password_hash, email_verified_at, name from users where email = ${email}`;
  return row;
};

describe('the full flow', () => {
  it('signs up, verifies, logs in with the mailed code and uses the session', async () => {
    const email = uniqueEmail('flow');
    await anon.authPasswordSignup({ body: { email, password: PASSWORD, name: 'Ada', language: 'de-AT' } });
    const verifyMail = await smtp.waitFor((m) => m.to.includes(email));
    expect(verifyMail.text).toContain(`${app.config.dashboardUrl}/auth/verify-email?token=`);
    expect((await userRow(email))!.email_verified_at).toBeNull();
    expect(await anon.authPasswordVerify({ body: { token: tokenIn(verifyMail) } })).toEqual({ accepted: true });
    expect((await userRow(email))!.email_verified_at).not.toBeNull();

    const challenge = await anon.authLogin({ body: { email: email.toUpperCase(), password: PASSWORD } });
    expect(challenge.status).toBe('code_sent');
    const codeMail = await smtp.waitFor((m) => m.to.includes(email) && m !== verifyMail);
    const session = await anon.authLoginVerify({ body: { challenge_id: challenge.challenge_id, code: codeIn(codeMail) } });
    expect(session.refresh_token).toMatch(/^svc_rt_[0-9A-Za-z]+$/);
    expect(session.user).toEqual({ id: (await userRow(email))!.id, name: 'Ada', email, language: 'de-AT' });

    const me = createClient({ baseUrl: app.baseUrl, token: session.token, retries: 0 });
    const current = await me.authSessionGet();
    expect(current.session_id).toBe(session.session_id);
    const sessions = await me.meSessionsList();
    expect(sessions.data).toEqual([expect.objectContaining({ id: session.session_id, current: true, ip: '127.0.0.1' })]);
  });
});

describe('anti-enumeration', () => {
  it('answers a wrong password and an unknown address identically', async () => {
    const { email } = await newAccount(app, smtp, 'enum');
    const attempt = async (body: { email: string; password: string }) => {
      const res = await fetch(`${app.baseUrl}/api/v2/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const headers = Object.fromEntries([...res.headers].filter(([k]) => !['x-request-id', 'date', 'content-length'].includes(k)));
      const { request_id: _ignored, ...problem } = (await res.json()) as Record<string, unknown>;
      return { status: res.status, headers, problem };
    };
    const wrong = await attempt({ email, password: 'not the password at all' });
    const unknown = await attempt({ email: uniqueEmail('nobody'), password: 'not the password at all' });
    expect(wrong).toEqual(unknown);
    expect(wrong.status).toBe(401);
    expect(wrong.problem.code).toBe('invalid-credentials');
  });

  it('accepts signup for an existing address identically, changes nothing on it and tells its owner', async () => {
    const { email } = await newAccount(app, smtp, 'taken');
    const before = await userRow(email);
    const seen = smtp.messages.length;
    const known = await anon.authPasswordSignup({ body: { email, password: 'another strong passphrase', name: 'Mallory' } });
    const fresh = await anon.authPasswordSignup({ body: { email: uniqueEmail('fresh'), password: 'another strong passphrase' } });
    expect(known).toEqual(fresh);
    expect(await userRow(email)).toEqual(before);
    const notice = await smtp.waitFor((m) => m.to.includes(email) && smtp.messages.indexOf(m) >= seen);
    expect(notice.text).not.toMatch(/token=/);
    // The old password still signs in.
    await logIn(app, smtp, email, 'correct horse battery staple');
  });

  it('accepts forgot identically for known and unknown addresses, mailing only the known one', async () => {
    const { email } = await newAccount(app, smtp, 'forgot');
    const seen = smtp.messages.length;
    const nobody = uniqueEmail('nobody');
    expect(await anon.authPasswordForgot({ body: { email } })).toEqual({ accepted: true });
    expect(await anon.authPasswordForgot({ body: { email: nobody } })).toEqual({ accepted: true });
    await smtp.waitFor((m) => m.to.includes(email) && smtp.messages.indexOf(m) >= seen);
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.messages.some((m) => m.to.includes(nobody))).toBe(false);
  });
});

describe('the login code', () => {
  it('is single use', async () => {
    const { email } = await newAccount(app, smtp, 'single');
    const seen = smtp.messages.length;
    const challenge = await anon.authLogin({ body: { email, password: PASSWORD } });
    const code = codeIn(await smtp.waitFor((m) => m.to.includes(email) && smtp.messages.indexOf(m) >= seen));
    await anon.authLoginVerify({ body: { challenge_id: challenge.challenge_id, code } });
    const again = await refusal(anon.authLoginVerify({ body: { challenge_id: challenge.challenge_id, code } }));
    expect([again.status, again.code]).toEqual([401, 'invalid-credentials']);
  });

  it('is burnt after 5 wrong tries: the right code no longer works and no session is made', async () => {
    const { email } = await newAccount(app, smtp, 'burn');
    const seen = smtp.messages.length;
    const challenge = await anon.authLogin({ body: { email, password: PASSWORD } });
    const code = codeIn(await smtp.waitFor((m) => m.to.includes(email) && smtp.messages.indexOf(m) >= seen));
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i += 1) {
      const err = await refusal(anon.authLoginVerify({ body: { challenge_id: challenge.challenge_id, code: wrong } }));
      expect([err.status, err.code]).toEqual([401, 'invalid-credentials']);
    }
    const sessionsBefore = await app.sql`select id from sessions`;
    const err = await refusal(anon.authLoginVerify({ body: { challenge_id: challenge.challenge_id, code } }));
    expect([err.status, err.code]).toEqual([401, 'invalid-credentials']);
    expect(await app.sql`select id from sessions`).toHaveLength(sessionsBefore.length);
  });

  it('expires after 10 minutes', async () => {
    const { email } = await newAccount(app, smtp, 'expire');
    const seen = smtp.messages.length;
    const challenge = await anon.authLogin({ body: { email, password: PASSWORD } });
    const code = codeIn(await smtp.waitFor((m) => m.to.includes(email) && smtp.messages.indexOf(m) >= seen));
    app.clock.advance(10 * 60 * 1000 + 1000);
    try {
      const err = await refusal(anon.authLoginVerify({ body: { challenge_id: challenge.challenge_id, code } }));
      expect([err.status, err.code]).toEqual([401, 'invalid-credentials']);
    } finally {
      app.clock.advance(-(10 * 60 * 1000 + 1000));
    }
  });

  it('is refused for a malformed code or challenge id with 400 and nothing counted', async () => {
    for (const body of [
      { challenge_id: 'nope', code: '123456' },
      { challenge_id: '00000000-0000-4000-8000-000000000000', code: '12345' },
      { challenge_id: '00000000-0000-4000-8000-000000000000', code: 'abcdef' },
    ]) {
      const err = await refusal(anon.authLoginVerify({ body }));
      expect([err.status, err.code]).toEqual([400, 'invalid-request']);
    }
  });
});

describe('passwords', () => {
  it('refuses short, common and address-like passwords at signup with invalid-field-value and creates nothing', async () => {
    const email = uniqueEmail('weak');
    for (const password of ['password', 'Password1', email, 'qwertyuiop']) {
      const err = await refusal(anon.authPasswordSignup({ body: { email, password } }));
      expect([err.status, err.code]).toEqual([400, 'invalid-field-value']);
      expect(err.errors).toEqual([expect.objectContaining({ location: 'body', pointer: '/password' })]);
    }
    const short = await refusal(anon.authPasswordSignup({ body: { email, password: 'short' } }));
    expect([short.status, short.code]).toEqual([400, 'invalid-request']);
    expect(await userRow(email)).toBeUndefined();
  });

  it('re-hashes a password stored with older parameters when its owner signs in', async () => {
    const { email } = await newAccount(app, smtp, 'rehash');
    const weak = await argon2.hash(PASSWORD, { type: argon2.argon2id, memoryCost: 4096, timeCost: 1, parallelism: 1 });
    await app.sql`update users set password_hash = ${weak} where email = ${email}`;
    await logIn(app, smtp, email, PASSWORD);
    const hash = (await userRow(email))!.password_hash!;
    expect(hash).not.toBe(weak);
    // The current parameters, in whichever order the argon2 binding writes them.
    const params = /^\$argon2id\$v=19\$([^$]+)\$/.exec(hash)![1]!.split(',').sort();
    expect(params).toEqual(['m=19456', 'p=1', 't=2']);
    await logIn(app, smtp, email, PASSWORD);
  });

  it('accepts a 1,024-character password and never truncates it', async () => {
    const email = uniqueEmail('long');
    const long = 'x'.repeat(1000) + 'ünïcödé-tail-' + 'y'.repeat(11);
    await signUp(app, smtp, email, long);
    await logIn(app, smtp, email, long);
    const truncated = await refusal(anon.authLogin({ body: { email, password: long.slice(0, 1000) } }));
    expect(truncated.code).toBe('invalid-credentials');
  });

  it('resets a forgotten password through the mailed link, signing every session out; the link is single use', async () => {
    const { email, session } = await newAccount(app, smtp, 'reset');
    const seen = smtp.messages.length;
    await anon.authPasswordForgot({ body: { email } });
    const token = tokenIn(await smtp.waitFor((m) => m.to.includes(email) && smtp.messages.indexOf(m) >= seen));
    await anon.authPasswordReset({ body: { token, password: 'a brand new passphrase' } });
    const old = createClient({ baseUrl: app.baseUrl, token: session.token, retries: 0 });
    expect((await refusal(old.authSessionGet())).status).toBe(401);
    await logIn(app, smtp, email, 'a brand new passphrase');
    const reused = await refusal(anon.authPasswordReset({ body: { token, password: 'yet another passphrase' } }));
    expect([reused.status, reused.code]).toEqual([400, 'invalid-field-value']);
    const unknown = await refusal(anon.authPasswordReset({ body: { token: 'x'.repeat(43), password: 'yet another passphrase' } }));
    expect({ ...(unknown.problem as object), request_id: '' }).toEqual({ ...(reused.problem as object), request_id: '' });
  });

  it('points emailed links at an allowed origin and refuses a disallowed or malformed one', async () => {
    const { email } = await newAccount(app, smtp, 'origin');
    const disallowed = await refusal(anon.authPasswordForgot({ body: { email, origin: 'https://evil.example' } }));
    expect([disallowed.status, disallowed.code]).toEqual([400, 'invalid-field-value']);
    const malformed = await refusal(anon.authPasswordForgot({ body: { email, origin: 'not a url' } }));
    expect([malformed.status, malformed.code]).toEqual([400, 'invalid-field-value']);
    const withPath = await refusal(anon.authPasswordForgot({ body: { email, origin: `${app.config.dashboardUrl}/path` } }));
    expect(withPath.status).toBe(400);
    const seen = smtp.messages.length;
    await anon.authPasswordForgot({ body: { email, origin: new URL(app.config.dashboardUrl).origin } });
    const mail = await smtp.waitFor((m) => m.to.includes(email) && smtp.messages.indexOf(m) >= seen);
    expect(mail.text).toContain(`${new URL(app.config.dashboardUrl).origin}/auth/reset-password?token=`);
  });

  it('changes the password, keeping only the named session', async () => {
    const { email, session: first } = await newAccount(app, smtp, 'change');
    const second = await logIn(app, smtp, email, PASSWORD);
    const third = await logIn(app, smtp, email, PASSWORD);
    const me = createClient({ baseUrl: app.baseUrl, token: second.token, retries: 0 });
    const wrong = await refusal(
      me.authPasswordChange({ body: { current_password: 'wrong password here', new_password: 'the next passphrase' } }),
    );
    expect([wrong.status, wrong.code]).toEqual([400, 'invalid-field-value']);
    expect((await me.meSessionsList()).data).toHaveLength(3);

    await me.authPasswordChange({
      body: { current_password: PASSWORD, new_password: 'the next passphrase', current_session_id: second.session_id },
    });
    expect((await me.meSessionsList()).data.map((s) => s.id)).toEqual([second.session_id]);
    for (const s of [first, third]) {
      const err = await refusal(createClient({ baseUrl: app.baseUrl, token: s.token, retries: 0 }).authSessionGet());
      expect([err.status, err.code]).toEqual([401, 'unauthenticated']);
    }
    await logIn(app, smtp, email, 'the next passphrase');
  });

  it('sets a first password only for an account without one', async () => {
    const { session } = await newAccount(app, smtp, 'set');
    const me = createClient({ baseUrl: app.baseUrl, token: session.token, retries: 0 });
    const err = await refusal(me.authPasswordSet({ body: { new_password: 'some other passphrase' } }));
    expect([err.status, err.code]).toEqual([422, 'password-already-set']);
    await app.sql`update users set password_hash = null where id = ${session.user.id}`;
    expect(await me.authPasswordSet({ body: { new_password: 'some other passphrase' } })).toEqual({ accepted: true });
  });
});
