// The platform's captcha configuration is a floor (DECISIONS.md §7, issue 26): a reseller hostname's
// own configuration adds actions to it and never removes one, so `Host` cannot switch the captcha off.
// The requests come through a trusted proxy (TRUST_PROXY_HOPS=1) that names the reseller's hostname
// in X-Forwarded-Host, as a deployment behind a load balancer sees them.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertCaptchaConfig } from '../../server/src/features/public/store.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { uniqueEmail } from '../support/auth.js';
import { outcome } from '../support/refusal.js';

const RESELLER = 'reseller.example';
let app: TestApp;
let verifier: Server;
let verifyUrl: string;
const verifyCalls: URLSearchParams[] = [];

beforeAll(async () => {
  app = await startTestApp({ env: { TRUST_PROXY_HOPS: '1' } });
  // Each configuration has its own secret; "good-token" is solved for either.
  verifier = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      verifyCalls.push(form);
      const success = ['platform-secret', 'reseller-secret'].includes(form.get('secret') ?? '') && form.get('response') === 'good-token';
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ success }));
    });
  });
  verifier.listen(0, '127.0.0.1');
  await once(verifier, 'listening');
  verifyUrl = `http://127.0.0.1:${(verifier.address() as AddressInfo).port}/siteverify`;
  await setConfig(null, 'platform', ['login', 'signup']);
});
afterAll(async () => {
  await app.close();
  verifier.close();
});

async function setConfig(hostname: string | null, name: string, actions: string[], enabled = true): Promise<void> {
  await upsertCaptchaConfig(
    app.sql,
    {
      hostname,
      provider: 'turnstile',
      site_key: `${name}-site`,
      secret_sealed: await app.box.seal('captcha-secret', `${name}-secret`),
      verify_url: verifyUrl,
      enabled,
      protected_actions: actions,
    },
    app.clock.now(),
  );
}

const viaReseller = (captcha?: string) =>
  createClient({
    baseUrl: app.baseUrl,
    retries: 0,
    headers: { 'X-Forwarded-Host': RESELLER, ...(captcha ? { 'X-Captcha-Token': captcha } : {}) },
  });

const challenges = async () => (await app.sql<{ n: number }[]>`select count(*)::int as n from login_challenges`)[0]!.n;

describe('captcha floor', () => {
  it("keeps the platform's protected actions on a reseller hostname whose configuration omits them", async () => {
    await setConfig(RESELLER, 'reseller', ['password_forgot']);
    const before = await challenges();
    const email = uniqueEmail('floor');
    expect(await outcome(viaReseller().authLogin({ body: { email, password: 'some passphrase' } }))).toEqual([400, 'captcha-failed']);
    expect(await outcome(viaReseller('bad-token').authLogin({ body: { email, password: 'some passphrase' } }))).toEqual([
      400,
      'captcha-failed',
    ]);
    // The reseller's own provider checks it: its dashboard shows its own widget.
    expect(verifyCalls.at(-1)!.get('sitekey')).toBe('reseller-site');
    expect(await outcome(viaReseller('good-token').authLogin({ body: { email, password: 'some passphrase' } }))).toEqual([
      401,
      'invalid-credentials',
    ]);
    // Its own action is protected as well, and the public configuration says both.
    expect(await outcome(viaReseller().authPasswordForgot({ body: { email } }))).toEqual([400, 'captcha-failed']);
    const pub = await createClient({ baseUrl: app.baseUrl, retries: 0 }).publicCaptchaConfigGet({ path: { hostname: RESELLER } });
    expect({ ...pub, protected_actions: [...pub.protected_actions].sort() }).toEqual({
      enabled: true,
      provider: 'turnstile',
      protected_actions: ['login', 'password_forgot', 'signup'],
      site_key: 'reseller-site',
    });
    expect(await challenges()).toBe(before);
  });

  it("keeps the platform's captcha when the reseller's configuration is switched off", async () => {
    await setConfig(RESELLER, 'reseller', [], false);
    const email = uniqueEmail('floor-off');
    expect(await outcome(viaReseller().authPasswordSignup({ body: { email, password: 'a fine passphrase' } }))).toEqual([
      400,
      'captcha-failed',
    ]);
    expect(await app.sql`select 1 from pending_signups where email = ${email}`).toHaveLength(0);
    expect(await outcome(viaReseller('good-token').authLogin({ body: { email, password: 'some passphrase' } }))).toEqual([
      401,
      'invalid-credentials',
    ]);
    expect(verifyCalls.at(-1)!.get('sitekey')).toBe('platform-site');
    const pub = await createClient({ baseUrl: app.baseUrl, retries: 0 }).publicCaptchaConfigGet({ path: { hostname: RESELLER } });
    expect(pub).toMatchObject({ enabled: true, site_key: 'platform-site', protected_actions: ['login', 'signup'] });
  });
});
