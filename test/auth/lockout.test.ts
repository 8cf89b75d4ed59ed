// Password sign-in is throttled per (address, source) first and account-wide only at a much higher
// count (NIST SP 800-63B §5.2.2: 100), so wrong passwords sent from elsewhere cannot lock the owner out
// (issue 26). Sources are told apart through a trusted proxy's X-Forwarded-For (TRUST_PROXY_HOPS=1).
import { createClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { newAccount } from '../support/auth.js';
import { outcome } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, TRUST_PROXY_HOPS: '1' } });
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const from = (source: string) => createClient({ baseUrl: app.baseUrl, retries: 0, headers: { 'X-Forwarded-For': source } });
const challenges = async (email: string) =>
  (
    await app.sql<{ n: number }[]>`
      select count(*)::int as n from login_challenges c join users u on u.id = c.user_id where u.email = ${email}`
  )[0]!.n;

describe('login throttling', () => {
  it('locks out the source that guessed, not the owner elsewhere; account-wide only after 100', async () => {
    const { email, password } = await newAccount(app, smtp, 'lockout');
    await app.sql`delete from rate_limit_buckets`;
    const wrong = { email, password: 'a wrong guess!' };
    const attacker = from('198.51.100.7');
    for (let i = 0; i < 10; i += 1) expect(await outcome(attacker.authLogin({ body: wrong }))).toEqual([401, 'invalid-credentials']);
    expect(await outcome(attacker.authLogin({ body: { email, password } }))).toEqual([429, 'rate-limited']);
    const before = await challenges(email);

    // The owner, from their own address, signs in as ever.
    expect(await from('203.0.113.20').authLogin({ body: { email, password } })).toMatchObject({ status: 'code_sent' });
    expect(await challenges(email)).toBe(before + 1);

    // Many sources together: the account-wide count (100 in 15 minutes) is the last line.
    const statuses: number[] = [];
    for (let s = 1; s <= 9; s += 1) {
      const source = from(`192.0.2.${s}`);
      for (let i = 0; i < 10; i += 1) {
        const o = await outcome(source.authLogin({ body: wrong }));
        statuses.push(o === 'ok' ? 200 : o[0]);
      }
    }
    // 10 + 1 attempts before, 89 more make 100; the 101st, from a source never seen, is refused.
    expect(statuses.slice(0, 89).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(89)).toEqual([429]);
    expect(await outcome(from('203.0.113.99').authLogin({ body: { email, password } }))).toEqual([429, 'rate-limited']);
    expect(await challenges(email)).toBe(before + 1);
  }, 240_000);
});
