// Staff routes for captcha configurations (DECISIONS.md §3 "Captcha", §4; `manage_public_content`), end
// to end: what staff set is what GET /public/captcha/config/{hostname} answers and what the sign-in
// routes enforce, checked against a siteverify endpoint on loopback that receives the secret. The secret
// is sealed at rest (never plaintext in the database) and never part of any answer or event.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { uniqueEmail } from '../support/auth.js';
import { outcome } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { clientOf, contentState, staffMember, staffToken, type Staff } from './staff.js';

let app: TestApp;
let smtp: TestSmtp;
let staff: Staff;
let other: Staff;
let verifier: Server;
let verifyUrl: string;
const verifyCalls: URLSearchParams[] = [];
const anonymous = () => clientOf(app);

const SECRET = 'sk-live-0123456789abcdef-very-secret';
/** The host the test requests are addressed to: a configuration for it applies to them. */
const HOST = '127.0.0.1';

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  staff = await staffMember(app, smtp, 'captcha-staff', ['manage_public_content']);
  other = await staffMember(app, smtp, 'captcha-other', ['manage_users']);
  // The provider's siteverify endpoint: "good-token" with the right secret is the one solved captcha.
  verifier = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      verifyCalls.push(form);
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({ success: form.get('secret') === SECRET && form.get('response') === 'good-token' }),
      );
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

/** PUT through plain fetch, for the raw text of the answer. */
async function putRaw(
  hostname: string,
  body: unknown,
  token: string,
): Promise<{ status: number; text: string }> {
  const res = await fetch(`${app.baseUrl}/api/v2/admin/captcha-configs/${hostname}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

const forgot = (captcha?: string) =>
  fetch(`${app.baseUrl}/api/v2/auth/password/forgot`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(captcha ? { 'x-captcha-token': captcha } : {}) },
    body: JSON.stringify({ email: uniqueEmail('forgot') }),
  });

const publicConfig = (hostname: string) => anonymous().publicCaptchaConfigGet({ path: { hostname } });
const storedRow = async (hostname: string | null) =>
  (
    await app.sql<{ secret: string | null; secret_sealed: string | null }[]>`
      select secret, secret_sealed from captcha_configs where hostname is not distinct from ${hostname}`
  )[0];

describe('captcha configurations', () => {
  it("sets the platform's own configuration with the provider's verify URL; every other hostname reads it", async () => {
    const put = await putRaw(
      '_platform',
      {
        enabled: true,
        provider: 'turnstile',
        site_key: 'platform-site',
        secret: SECRET,
        protected_actions: ['signup'],
      },
      staff.elevatedToken,
    );
    expect(put.status).toBe(200);
    expect(put.text).not.toContain(SECRET);
    expect(JSON.parse(put.text)).toEqual({
      hostname: '_platform',
      enabled: true,
      provider: 'turnstile',
      site_key: 'platform-site',
      secret_set: true,
      protected_actions: ['signup'],
      verify_url: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
    });
    expect(await publicConfig('anything.example')).toEqual({
      enabled: true,
      provider: 'turnstile',
      protected_actions: ['signup'],
      site_key: 'platform-site',
    });
    // Sealed at rest: the legacy clear column stays empty, the sealed value opens to the secret.
    const row = await storedRow(null);
    expect(row!.secret).toBeNull();
    expect(row!.secret_sealed).toMatch(/^v1\.[0-9a-f]{16}\./);
    expect(row!.secret_sealed).not.toContain(SECRET);
    expect(await app.box.openText('captcha-secret', row!.secret_sealed!)).toBe(SECRET);

    await staff.elevated.adminCaptchaConfigDelete({ path: { hostname: '_platform' } });
    expect(await publicConfig('anything.example')).toEqual({
      enabled: false,
      provider: 'none',
      protected_actions: [],
      site_key: null,
    });
  });

  it("protects a host's listed actions with the sealed secret, keeps the secret when none is given, and can switch off", async () => {
    const set = (body: Record<string, unknown>) =>
      staff.elevated.adminCaptchaConfigSet({
        path: { hostname: HOST },
        body: {
          enabled: true,
          provider: 'hcaptcha',
          site_key: 'host-site',
          protected_actions: ['password_forgot'],
          verify_url: verifyUrl,
          ...body,
        } as never,
      });
    const first = await set({ secret: SECRET });
    expect(first).toMatchObject({ hostname: HOST, secret_set: true, verify_url: verifyUrl });
    expect(await publicConfig(HOST)).toEqual({
      enabled: true,
      provider: 'hcaptcha',
      protected_actions: ['password_forgot'],
      site_key: 'host-site',
    });

    expect(((await (await forgot()).json()) as { code: string }).code).toBe('captcha-failed');
    expect((await forgot('good-token')).status).toBe(200);
    expect(verifyCalls.at(-1)!.get('secret')).toBe(SECRET);
    expect(verifyCalls.at(-1)!.get('sitekey')).toBe('host-site');

    // No secret given: the stored one stays, sealed as it was.
    const sealedBefore = (await storedRow(HOST))!.secret_sealed;
    const second = await set({ protected_actions: ['password_forgot', 'login'], site_key: 'host-site-2' });
    expect(second).toMatchObject({
      secret_set: true,
      site_key: 'host-site-2',
      protected_actions: ['password_forgot', 'login'],
    });
    expect((await storedRow(HOST))!.secret_sealed).toBe(sealedBefore);
    expect((await forgot('good-token')).status).toBe(200);
    expect(verifyCalls.at(-1)!.get('secret')).toBe(SECRET);

    await set({ enabled: false });
    expect(await publicConfig(HOST)).toEqual({
      enabled: false,
      provider: 'hcaptcha',
      protected_actions: [],
      site_key: null,
    });
    expect((await forgot()).status).toBe(200);

    await staff.elevated.adminCaptchaConfigDelete({ path: { hostname: HOST } });
    expect(await storedRow(HOST)).toBeUndefined();
    const events = await app.sql<{ action: string; details: Record<string, unknown>; text: string }[]>`
      select action, details, details::text as text from platform_events where action like 'captcha.%' order by created_at, id`;
    expect(events.every((e) => !e.text.includes(SECRET))).toBe(true);
    expect(
      events
        .filter((e) => e.details.hostname === HOST)
        .map((e) => [e.action, e.details.secret_replaced ?? null]),
    ).toEqual(
      expect.arrayContaining([
        ['captcha.config_set', true],
        ['captcha.config_set', false],
        ['captcha.config_deleted', null],
      ]),
    );
  });

  it('refuses callers, bodies and unknown hostnames it must, changing nothing', async () => {
    await staff.elevated.adminCaptchaConfigSet({
      path: { hostname: 'kept.example' },
      body: {
        enabled: true,
        provider: 'hcaptcha',
        site_key: 'kept',
        secret: SECRET,
        protected_actions: ['login'],
      },
    });
    const before = await contentState(app);
    const body = {
      enabled: true,
      provider: 'hcaptcha' as const,
      site_key: 'k',
      secret: 's',
      protected_actions: ['login'],
    };
    const path = { hostname: 'kept.example' };
    const cases: [string, () => Promise<unknown>, [number, string]][] = [
      ['anonymous set', () => anonymous().adminCaptchaConfigSet({ path, body }), [401, 'unauthenticated']],
      [
        'un-elevated set',
        () => staff.plain.adminCaptchaConfigSet({ path, body }),
        [403, 'elevation-required'],
      ],
      [
        'set without the permission',
        () => other.elevated.adminCaptchaConfigSet({ path, body }),
        [403, 'forbidden'],
      ],
      ['anonymous delete', () => anonymous().adminCaptchaConfigDelete({ path }), [401, 'unauthenticated']],
      [
        'un-elevated delete',
        () => staff.plain.adminCaptchaConfigDelete({ path }),
        [403, 'elevation-required'],
      ],
      [
        'delete without the permission',
        () => other.elevated.adminCaptchaConfigDelete({ path }),
        [403, 'forbidden'],
      ],
      [
        'enabled without any secret',
        () =>
          staff.elevated.adminCaptchaConfigSet({
            path: { hostname: 'new.example' },
            body: { ...body, secret: undefined },
          }),
        [400, 'invalid-field-value'],
      ],
      [
        'custom without verify_url',
        () => staff.elevated.adminCaptchaConfigSet({ path, body: { ...body, provider: 'custom' } }),
        [400, 'invalid-field-value'],
      ],
      [
        'blank site key',
        () => staff.elevated.adminCaptchaConfigSet({ path, body: { ...body, site_key: '  ' } }),
        [400, 'invalid-field-value'],
      ],
      [
        'unknown provider',
        () => staff.elevated.adminCaptchaConfigSet({ path, body: { ...body, provider: 'acme' as never } }),
        [400, 'invalid-request'],
      ],
      [
        'action not snake_case',
        () => staff.elevated.adminCaptchaConfigSet({ path, body: { ...body, protected_actions: ['Login'] } }),
        [400, 'invalid-request'],
      ],
      [
        'repeated action',
        () =>
          staff.elevated.adminCaptchaConfigSet({
            path,
            body: { ...body, protected_actions: ['login', 'login'] },
          }),
        [400, 'invalid-request'],
      ],
      [
        'verify_url not http',
        () =>
          staff.elevated.adminCaptchaConfigSet({ path, body: { ...body, verify_url: 'ftp://x.example/v' } }),
        [400, 'invalid-request'],
      ],
      [
        'unknown field',
        () => staff.elevated.adminCaptchaConfigSet({ path, body: { ...body, secret_sealed: 'x' } as never }),
        [400, 'invalid-request'],
      ],
      [
        'no enabled',
        () => staff.elevated.adminCaptchaConfigSet({ path, body: { ...body, enabled: undefined } as never }),
        [400, 'invalid-request'],
      ],
      [
        'bad hostname',
        () => staff.elevated.adminCaptchaConfigSet({ path: { hostname: 'bad_host' }, body }),
        [400, 'invalid-request'],
      ],
      [
        'unknown hostname delete',
        () => staff.elevated.adminCaptchaConfigDelete({ path: { hostname: 'none.example' } }),
        [404, 'not-found'],
      ],
    ];
    for (const [name, call, want] of cases) expect(await outcome(call()), name).toEqual(want);
    expect(await contentState(app)).toEqual(before);
  });

  it('lets an admin-authorized API token with admin.public_content.manage set a configuration', async () => {
    const ops = await staffToken(app, staff, ['admin.public_content.manage']);
    const answer = await ops.adminCaptchaConfigSet({
      path: { hostname: 'Token.Example.' },
      body: { enabled: true, provider: 'recaptcha', site_key: 'tk', secret: SECRET, protected_actions: [] },
    });
    expect(answer).toMatchObject({
      hostname: 'token.example',
      verify_url: 'https://www.google.com/recaptcha/api/siteverify',
    });
    expect(JSON.stringify(answer)).not.toContain(SECRET);
    expect((await publicConfig('token.example')).site_key).toBe('tk');
  });
});
