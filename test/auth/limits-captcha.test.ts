// Rate limits held in PostgreSQL, and captcha on the actions a host's configuration lists.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, SvcApiError } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertCaptchaConfig } from '../../server/src/features/public/store.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { newAccount, uniqueEmail } from '../support/auth.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let verifier: Server;
let verifyUrl: string;
const verifyCalls: URLSearchParams[] = [];

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url } });
  // The captcha provider's siteverify endpoint, on loopback: "good-token" is the one solved captcha.
  verifier = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      verifyCalls.push(form);
      const success = form.get('secret') === 'captcha-secret' && form.get('response') === 'good-token';
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ success }));
    });
  });
  verifier.listen(0, '127.0.0.1');
  await once(verifier, 'listening');
  verifyUrl = `http://127.0.0.1:${(verifier.address() as AddressInfo).port}/siteverify`;
});
afterAll(async () => {
  await app.close();
  await smtp.close();
  verifier.close();
});

async function outcome(p: Promise<unknown>): Promise<unknown> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof SvcApiError) return { status: e.status, code: e.code, retryAfter: e.retryAfter };
    throw e;
  }
}

describe('rate limits', () => {
  it('refuses the 11th login for one address in 15 minutes with 429 and Retry-After, for any address alike', async () => {
    await app.sql`delete from rate_limit_buckets`;
    const anon = createClient({ baseUrl: app.baseUrl, retries: 0 });
    const { email } = await newAccount(app, smtp, 'limited');
    await app.sql`delete from rate_limit_buckets`;
    for (const address of [email, uniqueEmail('ghost')]) {
      for (let i = 0; i < 10; i += 1) {
        expect(await outcome(anon.authLogin({ body: { email: address, password: 'wrong password!' } }))).toMatchObject({
          status: 401,
        });
      }
      const tripped = (await outcome(anon.authLogin({ body: { email: address, password: 'wrong password!' } }))) as {
        status: number;
        code: string;
        retryAfter: number;
      };
      expect(tripped.status).toBe(429);
      expect(tripped.code).toBe('rate-limited');
      expect(tripped.retryAfter).toBeGreaterThan(0);
    }
    // The limit lapses with time.
    app.clock.advance(31 * 60 * 1000);
    try {
      expect(await outcome(anon.authLogin({ body: { email, password: 'wrong password!' } }))).toMatchObject({ status: 401 });
    } finally {
      app.clock.advance(-31 * 60 * 1000);
    }
  }, 90_000);

  it('makes a tripped forgot limit look exactly like success, and sends nothing more', async () => {
    await app.sql`delete from rate_limit_buckets`;
    const { email } = await newAccount(app, smtp, 'forgot-limit');
    const before = smtp.messages.length;
    const answers: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      const res = await fetch(`${app.baseUrl}/api/v2/auth/password/forgot`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email }),
      });
      answers.push(`${res.status} ${res.headers.get('retry-after')} ${await res.text()}`);
    }
    expect(new Set(answers)).toEqual(new Set(['200 null {"accepted":true}']));
    // The links are made and mailed on the job queue: every job done, and every mail delivered.
    await app.worker!.runDue();
    await app.worker!.runDue();
    await new Promise((r) => setTimeout(r, 500));
    expect(smtp.messages.slice(before).filter((m) => m.to.includes(email))).toHaveLength(3);
  });

  it('makes a tripped signup limit look like success: nothing created, nothing sent', async () => {
    await app.sql`delete from rate_limit_buckets`;
    const email = uniqueEmail('signup-limit');
    const before = smtp.messages.length;
    const answers = new Set<string>();
    for (let i = 0; i < 5; i += 1) {
      const res = await fetch(`${app.baseUrl}/api/v2/auth/password/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: 'a fine passphrase' }),
      });
      answers.add(`${res.status} ${res.headers.get('retry-after')} ${await res.text()}`);
    }
    expect(answers).toEqual(new Set(['200 null {"accepted":true}']));
    // The account and the notices are made on the job queue, then mailed by it.
    await app.worker!.runDue();
    await app.worker!.runDue();
    await new Promise((r) => setTimeout(r, 500));
    // Three per address per hour: one verification link, then two notices to the new owner.
    expect(smtp.messages.slice(before).filter((m) => m.to.includes(email))).toHaveLength(3);
    expect(await app.sql`select 1 from users where email = ${email}`).toHaveLength(1);
  });

  it('scales per-source limits with SOURCE_RATE_LIMIT_SCALE but never per-address ones', async () => {
    const scaled = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '0.1' }, databaseUrl: app.databaseUrl });
    try {
      await app.sql`delete from rate_limit_buckets`;
      const anon = createClient({ baseUrl: scaled.baseUrl, retries: 0 });
      // 30 per source × 0.1 = 3 logins from this address, whatever the account.
      const results = [];
      for (let i = 0; i < 4; i += 1) {
        results.push(await outcome(anon.authLogin({ body: { email: uniqueEmail('src'), password: 'wrong password!' } })));
      }
      expect(results.map((r) => (r as { status: number }).status)).toEqual([401, 401, 401, 429]);
    } finally {
      await scaled.close();
    }
  });
});

describe('captcha', () => {
  // The request's Host is the one the configuration is looked up by: the app's loopback address here,
  // while `localhost` stands for any other host.
  const host = '127.0.0.1';
  const post = (path: string, body: unknown, token?: string) =>
    fetch(`${app.baseUrl}/api/v2${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(token ? { 'x-captcha-token': token } : {}),
      },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    await upsertCaptchaConfig(
      app.sql,
      {
        hostname: host,
        provider: 'hcaptcha',
        site_key: 'site-key',
        secret_sealed: await app.box.seal('captcha-secret', 'captcha-secret'),
        verify_url: verifyUrl,
        enabled: true,
        protected_actions: ['login', 'signup'],
      },
      app.clock.now(),
    );
  });

  it('refuses a listed action without a token or with a wrong one, and changes nothing', async () => {
    await app.sql`delete from rate_limit_buckets`;
    const email = uniqueEmail('captcha');
    for (const token of [undefined, 'bad-token']) {
      const res = await post('/auth/password/signup', { email, password: 'a fine passphrase' }, token);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { code: string }).code).toBe('captcha-failed');
    }
    expect(await app.sql`select 1 from users where email = ${email}`).toHaveLength(0);
    expect(verifyCalls.at(-1)?.get('response')).toBe('bad-token');
  });

  it('lets a listed action through with a solved captcha, and leaves unlisted actions and other hosts alone', async () => {
    const email = uniqueEmail('captcha-ok');
    const ok = await post('/auth/password/signup', { email, password: 'a fine passphrase' }, 'good-token');
    expect(ok.status).toBe(200);
    expect(verifyCalls.at(-1)?.get('remoteip')).toBe('127.0.0.1');
    // password_forgot is not listed for this host.
    expect((await post('/auth/password/forgot', { email })).status).toBe(200);
    // Another host falls back to the platform configuration, which has none.
    const other = await fetch(`${app.baseUrl.replace('127.0.0.1', 'localhost')}/api/v2/auth/password/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: uniqueEmail('elsewhere'), password: 'a fine passphrase' }),
    });
    expect(other.status).toBe(200);
  });
});
