// A password change spends every outstanding reset link of the account (DECISIONS.md §7, issue 26):
// a link mailed before the change cannot undo it afterwards.
import { createClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { logIn, newAccount, tokenIn } from '../support/auth.js';
import { refusal } from '../support/refusal.js';
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

const passwordHash = async (email: string) =>
  (await app.sql<{ password_hash: string }[]>`select password_hash from users where email = ${email}`)[0]!.password_hash;

describe('reset links after a password change', () => {
  it('refuses a link mailed before the change, leaving the new password in place', async () => {
    const { email, password, session } = await newAccount(app, smtp, 'spent-link');
    const anon = createClient({ baseUrl: app.baseUrl, retries: 0 });
    const seen = smtp.messages.length;
    await anon.authPasswordForgot({ body: { email } });
    const link = tokenIn(await smtp.waitFor((m) => m.to.includes(email) && smtp.messages.indexOf(m) >= seen && /reset/i.test(m.text)));

    const me = createClient({ baseUrl: app.baseUrl, token: session.token, retries: 0 });
    await me.authPasswordChange({
      body: { current_password: password, new_password: 'a changed passphrase', current_session_id: session.session_id },
    });
    const changed = await passwordHash(email);

    const late = await refusal(anon.authPasswordReset({ body: { token: link, password: 'the attacker passphrase' } }));
    expect([late.status, late.code, late.errors?.[0]?.pointer]).toEqual([400, 'invalid-field-value', '/token']);
    expect(await passwordHash(email)).toBe(changed);
    expect(
      await app.sql`select 1 from email_tokens t join users u on u.id = t.user_id
                    where u.email = ${email} and t.purpose = 'password_reset' and t.used_at is null`,
    ).toHaveLength(0);
    await logIn(app, smtp, email, 'a changed passphrase');
    const old = await refusal(anon.authLogin({ body: { email, password: 'the attacker passphrase' } }));
    expect(old.code).toBe('invalid-credentials');
  }, 90_000);
});
