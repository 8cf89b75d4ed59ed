// The links mail carries, opened in a real Chromium (playwright-core over CDP) on the embedded default:
// no DASHBOARD_URL, so each link points at PUBLIC_BASE_URL, the API's own address, whose link pages
// call the API from the browser. The mailed link is opened exactly as mailed; every request the page
// makes is recorded and must stay on the API's origin, and no CSP violation may be reported.
import { createClient } from '@svcplatform/sdk';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { codeIn, logIn, newAccount, uniqueEmail } from '../support/auth.js';
import { findChromium } from '../support/browser.js';
import { signedIn } from '../support/organizations.js';
import { startTestSmtp, type ReceivedMail, type TestSmtp } from '../support/smtp.js';

const CHROMIUM = findChromium();
const PASSWORD = 'correct horse battery staple';

/** The one link of a mail that starts with `prefix`. */
function linkIn(mail: ReceivedMail, prefix: string): string {
  const links = mail.text.match(/https?:\/\/\S+/g) ?? [];
  const link = links.find((l) => l.startsWith(prefix));
  if (!link) throw new Error(`no link starting with ${prefix} in "${mail.subject}": ${links.join(' ')}`);
  return link;
}

describe.skipIf(!CHROMIUM)(
  'emailed links in Chromium (skipped when no chromium binary exists: apt-get install chromium, or set CHROMIUM_PATH)',
  () => {
    let smtp: TestSmtp;
    let app: TestApp;
    let browser: Browser;
    let context: BrowserContext;
    let requests: string[];
    let violations: string[];

    beforeAll(async () => {
      smtp = await startTestSmtp();
      // No DASHBOARD_URL: links point at PUBLIC_BASE_URL, which is this app's own address.
      app = await startTestApp({
        env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' },
        ownBaseUrl: true,
      });
      browser = await chromium.launch({ executablePath: CHROMIUM! });
    });
    afterAll(async () => {
      await browser?.close();
      await app?.close();
      await smtp?.close();
    });

    async function open(link: string): Promise<Page> {
      context = await browser.newContext();
      requests = [];
      violations = [];
      const page = await context.newPage();
      page.on('request', (r) => requests.push(r.url()));
      page.on('console', (m) => {
        if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
      });
      await page.goto(link);
      return page;
    }
    afterEach(async () => {
      await context?.close();
      expect(violations).toEqual([]);
      expect(requests.length).toBeGreaterThan(0);
      for (const url of requests) expect(url.startsWith(`${app.baseUrl}/`)).toBe(true);
    });

    /** Waits until the page says it is done or has failed; answers which, and what it said. */
    async function outcome(page: Page): Promise<{ kind: string; text: string }> {
      await page.waitForFunction(() => {
        const kind = document.getElementById('status')?.dataset.kind;
        return kind === 'done' || kind === 'failed';
      });
      return page.$eval('#status', (el) => ({
        kind: (el as HTMLElement).dataset.kind ?? '',
        text: el.textContent ?? '',
      }));
    }

    const nextMail = (to: string, after: number, match: RegExp = /./) =>
      smtp.waitFor(
        (m) => m.to.includes(to) && smtp.messages.indexOf(m) >= after && match.test(m.text),
        15_000,
      );

    const verifiedAt = async (email: string) =>
      (
        await app.sql<
          { email_verified_at: Date | null }[]
        >`select email_verified_at from users where email = ${email}`
      )[0]?.email_verified_at;

    it('the verification link confirms the address, and says so; opened again, it says it was used', async () => {
      const email = uniqueEmail('verify');
      const seen = smtp.messages.length;
      await createClient({ baseUrl: app.baseUrl, retries: 0 }).authPasswordSignup({
        body: { email, password: PASSWORD },
      });
      const link = linkIn(await nextMail(email, seen), `${app.baseUrl}/auth/verify-email?token=`);
      expect(await verifiedAt(email)).toBeNull();

      const page = await open(link);
      expect(await outcome(page)).toEqual({ kind: 'done', text: 'Your email address is confirmed.' });
      expect(await verifiedAt(email)).toBeInstanceOf(Date);

      await page.reload();
      expect(await outcome(page)).toMatchObject({
        kind: 'failed',
        text: expect.stringContaining('already used'),
      });
    });

    it('the reset link sets a new password that signs in; a refused one changes nothing', async () => {
      const { email } = await newAccount(app, smtp, 'reset', PASSWORD);
      const seen = smtp.messages.length;
      await createClient({ baseUrl: app.baseUrl, retries: 0 }).authPasswordForgot({ body: { email } });
      const link = linkIn(await nextMail(email, seen), `${app.baseUrl}/auth/reset-password?token=`);
      const page = await open(link);

      // Too short: the API's refusal is shown, and the old password still signs in.
      await page.fill('#password', 'short');
      await page.fill('#repeat', 'short');
      await page.click('#reset button[type=submit]');
      expect(await outcome(page)).toMatchObject({
        kind: 'failed',
        text: expect.stringMatching(/^The password .*\b\d+ characters\.$/),
      });
      await expect(logIn(app, smtp, email, PASSWORD)).resolves.toMatchObject({ user: { email } });

      const fresh = 'a whole new passphrase 7';
      await page.fill('#password', fresh);
      await page.fill('#repeat', fresh);
      await page.click('#reset button[type=submit]');
      expect(await outcome(page)).toMatchObject({
        kind: 'done',
        text: expect.stringContaining('new password is set'),
      });
      expect(await page.isVisible('#reset')).toBe(false);

      await expect(logIn(app, smtp, email, fresh)).resolves.toMatchObject({ user: { email } });
      await expect(
        createClient({ baseUrl: app.baseUrl, retries: 0 }).authLogin({ body: { email, password: PASSWORD } }),
      ).rejects.toMatchObject({ status: 401, code: 'invalid-credentials' });
    });

    it('the invitation link, after signing in on the page with password and code, accepts the invitation', async () => {
      const owner = await signedIn(app, smtp, 'owner');
      const invitee = await newAccount(app, smtp, 'invitee', PASSWORD);
      const stranger = await newAccount(app, smtp, 'stranger', PASSWORD);
      const org = await owner.api.organizationCreate({
        body: { name: 'Acme Hosting', slug: `acme-${Date.now().toString(36)}` },
      });
      const seen = smtp.messages.length;
      const invitation = await owner.api.invitationCreate({
        path: { id: org.id },
        body: { email: invitee.email, role: 'admin' },
      });
      const link = linkIn(await nextMail(invitee.email, seen), `${app.baseUrl}/invitations/`);
      expect(link).toBe(`${app.baseUrl}/invitations/${invitation.id}`);
      const page = await open(link);

      async function signInOnPage(email: string): Promise<void> {
        const before = smtp.messages.length;
        await page.fill('#email', email);
        await page.fill('#password', PASSWORD);
        await page.click('#sign-in button[type=submit]');
        await page.waitForSelector('#code-input', { state: 'visible' });
        const code = codeIn(await nextMail(email, before, /\b\d{6}\b/));
        await page.fill('#code-input', code);
        await page.click('#code button[type=submit]');
      }

      // Someone else signed in sees no invitation, and the page signs them out again.
      await signInOnPage(stranger.email);
      expect(await outcome(page)).toMatchObject({
        kind: 'failed',
        text: expect.stringContaining('no invitation at this link'),
      });
      await page.waitForSelector('#sign-in', { state: 'visible' });

      await signInOnPage(invitee.email);
      await page.waitForSelector('#decide', { state: 'visible' });
      expect(await page.textContent('#organization')).toBe('Acme Hosting');
      expect(await page.textContent('#role')).toBe('admin');
      await page.click('#decide button[value=accept]');
      expect(await outcome(page)).toMatchObject({
        kind: 'done',
        text: expect.stringContaining('member of Acme Hosting (admin)'),
      });

      const members = await owner.api.memberList({ path: { id: org.id } });
      expect(members.find((m) => m.user_id === invitee.session.user.id)).toMatchObject({
        role: 'admin',
      });
      const invitee2 = createClient({ baseUrl: app.baseUrl, token: invitee.session.token, retries: 0 });
      expect(await invitee2.invitationGet({ path: { id: invitation.id } })).toMatchObject({
        status: 'accepted',
      });
      // The page's own sessions ended: the invitee's test session is the only one left.
      const sessions = await invitee2.meSessionsList();
      expect(sessions.data).toHaveLength(1);
      const strangerSessions = await createClient({
        baseUrl: app.baseUrl,
        token: stranger.session.token,
        retries: 0,
      }).meSessionsList();
      expect(strangerSessions.data).toHaveLength(1);
    });
  },
);
