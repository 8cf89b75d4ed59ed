// The link pages as HTTP serves them: every link the mail carries on the embedded default opens one
// of them; each is self-contained (its CSP admits its own inline style and script by hash, requests
// to its own origin, nothing else) and is neither cached nor framed nor sent on as a referrer.
import { createHash } from 'node:crypto';
import { createClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { newAccount, uniqueEmail } from '../support/auth.js';
import { signedIn } from '../support/organizations.js';
import { startTestSmtp, type ReceivedMail, type TestSmtp } from '../support/smtp.js';

const PAGES = [
  '/auth/verify-email?token=abc',
  '/auth/reset-password?token=abc',
  '/auth/forgot-password',
  '/auth/login',
  '/invitations/6f1c2a4e-0000-4000-8000-000000000001',
];

const hashOf = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
const linksIn = (mail: ReceivedMail) => mail.text.match(/https?:\/\/\S+/g) ?? [];

let smtp: TestSmtp;
let app: TestApp;
beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' },
    ownBaseUrl: true,
  });
});
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

describe('each link page', () => {
  it.each(PAGES)('%s: self-contained HTML under a strict CSP', async (path) => {
    const res = await fetch(`${app.baseUrl}${path}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    const csp = Object.fromEntries(
      res.headers
        .get('content-security-policy')!
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([name, ...values]) => [name, values.join(' ')]),
    );
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1];
    expect(csp).toEqual({
      'default-src': "'none'",
      'style-src': hashOf(style),
      'script-src': script === undefined ? "'none'" : hashOf(script),
      'connect-src': "'self'",
      'base-uri': "'none'",
      'form-action': "'none'",
      'frame-ancestors': "'none'",
    });
    // Nothing to load from anywhere: no external script, style, image or frame, no absolute URL at all.
    expect(html).not.toMatch(/<(link|img|iframe|object|embed)\b|<script\s+src|https?:\/\/|\/\/[a-z]/i);
    expect(html).not.toMatch(/\son[a-z]+=/i);
  });

  it('an /invitations/ path that is no invitation id is the 404 of an unknown route', async () => {
    const res = await fetch(`${app.baseUrl}/invitations/not-an-id`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
  });
});

describe('mailed links on the embedded default', () => {
  it('every link of the verification, reset, sign-up-again and invitation mails opens a link page', async () => {
    const api = createClient({ baseUrl: app.baseUrl, retries: 0 });
    const seen = smtp.messages.length;
    const email = uniqueEmail('links');
    await api.authPasswordSignup({ body: { email, password: 'correct horse battery staple' } });
    const { email: known } = await newAccount(app, smtp, 'known');
    await api.authPasswordSignup({ body: { email: known, password: 'another horse battery staple' } });
    await api.authPasswordForgot({ body: { email: known } });
    const owner = await signedIn(app, smtp, 'owner');
    const org = await owner.api.organizationCreate({
      body: { name: 'Links', slug: `links-${Date.now().toString(36)}` },
    });
    await owner.api.invitationCreate({ path: { id: org.id }, body: { email, role: 'member' } });

    const wait = (to: string, subject: string) =>
      smtp.waitFor((m) => m.to.includes(to) && m.subject === subject && smtp.messages.indexOf(m) >= seen);
    const mails = await Promise.all([
      wait(email, 'Confirm your email address'),
      wait(known, 'Sign-up attempt with your email address'),
      wait(known, 'Reset your password'),
      wait(email, 'You are invited to join an organization'),
    ]);
    const links = mails.flatMap(linksIn);
    expect(links.map((l) => new URL(l).pathname).sort()).toEqual(
      [
        '/auth/forgot-password',
        '/auth/login',
        '/auth/reset-password',
        '/auth/verify-email',
        expect.stringMatching(/^\/invitations\//),
      ].sort(),
    );
    for (const link of links) {
      expect(link.startsWith(`${app.baseUrl}/`)).toBe(true);
      const res = await fetch(link);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('<!doctype html>');
    }
  });
});
