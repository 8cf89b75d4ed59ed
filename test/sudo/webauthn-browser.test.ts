// Passkey elevation end to end in a real browser: Chromium's virtual authenticator (CDP WebAuthn
// domain: ctap2, internal, resident keys, user verification) on a page served over loopback at an
// origin the API accepts (http://localhost:PORT, rpId "localhost"). The page fetches the options,
// calls navigator.credentials.create/get and posts credential.toJSON() back, as a dashboard would.
import { createClient } from '@svcplatform/sdk';
import { chromium, type Browser, type CDPSession, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { newAccount } from '../support/auth.js';
import { findChromium, startPageServer, type PageServer } from '../support/browser.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

const CHROMIUM = findChromium();

// The dashboard's part, in the page. Options go through PublicKeyCredential.parse*OptionsFromJSON
// where the browser has it, else through a hand-written base64url decoding.
const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>passkey test page</title>
<script>
const toBuf = (s) => {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4);
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer;
};
const toB64u = (buf) =>
  btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
const descriptors = (list) => (list || []).map((c) => ({ ...c, id: toBuf(c.id) }));
const creationOptions = (o) =>
  PublicKeyCredential.parseCreationOptionsFromJSON
    ? PublicKeyCredential.parseCreationOptionsFromJSON(o)
    : { ...o, challenge: toBuf(o.challenge), user: { ...o.user, id: toBuf(o.user.id) }, excludeCredentials: descriptors(o.excludeCredentials) };
const requestOptions = (o) =>
  PublicKeyCredential.parseRequestOptionsFromJSON
    ? PublicKeyCredential.parseRequestOptionsFromJSON(o)
    : { ...o, challenge: toBuf(o.challenge), allowCredentials: descriptors(o.allowCredentials) };
const asJSON = (cred) => {
  if (typeof cred.toJSON === 'function') return cred.toJSON();
  const r = cred.response;
  const response = { clientDataJSON: toB64u(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = toB64u(r.attestationObject);
    response.transports = r.getTransports ? r.getTransports() : [];
  } else {
    response.authenticatorData = toB64u(r.authenticatorData);
    response.signature = toB64u(r.signature);
    if (r.userHandle) response.userHandle = toB64u(r.userHandle);
  }
  return { id: cred.id, rawId: toB64u(cred.rawId), type: cred.type, response,
    authenticatorAttachment: cred.authenticatorAttachment, clientExtensionResults: cred.getClientExtensionResults() };
};
async function call(path, token, body) {
  const res = await fetch('/api/v2' + path, {
    method: 'POST',
    headers: body ? { authorization: 'Bearer ' + token, 'content-type': 'application/json' } : { authorization: 'Bearer ' + token },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}
async function ceremony(kind, token) {
  const options = await call('/auth/sudo/webauthn/' + kind + '-options', token);
  if (options.status !== 200) return { step: 'options', ...options };
  let credential;
  try {
    credential = kind === 'register'
      ? await navigator.credentials.create({ publicKey: creationOptions(options.body) })
      : await navigator.credentials.get({ publicKey: requestOptions(options.body) });
  } catch (err) {
    return { step: 'browser', error: err.name };
  }
  const json = asJSON(credential);
  const answer = await call('/auth/sudo/webauthn/' + kind, token, { credential: json });
  return { step: 'answer', ...answer, credential: json, parsedByBrowser: !!PublicKeyCredential.parseCreationOptionsFromJSON };
}
window.ceremony = ceremony;
</script>
<p>passkey test page</p>`;

type Outcome = {
  step: 'options' | 'browser' | 'answer';
  status?: number;
  body?: { token?: string; elevated_until?: string; code?: string };
  error?: string;
  credential?: { id: string; response: Record<string, unknown> };
  parsedByBrowser?: boolean;
};

describe.skipIf(!CHROMIUM)(
  'passkeys in Chromium with a virtual authenticator (skipped when no chromium binary exists: apt-get install chromium, or set CHROMIUM_PATH)',
  () => {
    let smtp: TestSmtp;
    let pages: PageServer;
    let app: TestApp;
    let browser: Browser;
    let page: Page;
    let cdp: CDPSession;
    let authenticatorId: string;
    let origin: string;

    beforeAll(async () => {
      smtp = await startTestSmtp();
      pages = await startPageServer(PAGE);
      origin = `http://localhost:${pages.port}`;
      // rpId = the host of PUBLIC_BASE_URL ("localhost"); its origin is the one the API accepts.
      app = await startTestApp({
        env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', PUBLIC_BASE_URL: origin },
      });
      pages.upstream = app.baseUrl;
      browser = await chromium.launch({
        executablePath: CHROMIUM!,
        // Chromium resolves localhost itself; pin it to the address the page server listens on.
        args: ['--host-resolver-rules=MAP localhost 127.0.0.1'],
      });
      page = await browser.newPage();
      cdp = await page.context().newCDPSession(page);
      await cdp.send('WebAuthn.enable');
      ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'internal',
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
        },
      }));
      await page.goto(`${origin}/`);
    });
    afterAll(async () => {
      await browser?.close();
      await app?.close();
      await pages?.close();
      await smtp?.close();
    });

    const run = (kind: 'register' | 'authenticate', token: string) =>
      page.evaluate(
        ([k, t]) =>
          (window as unknown as { ceremony(k: string, t: string): Promise<Outcome> }).ceremony(k, t),
        [kind, token] as const,
      );

    it('registers a passkey, then elevates with it; the counter the authenticator keeps is stored', async () => {
      expect(app.config.webauthn).toMatchObject({
        rpId: 'localhost',
        origins: expect.arrayContaining([origin]),
      });
      const { session } = await newAccount(app, smtp, 'browser');
      const api = createClient({ baseUrl: app.baseUrl, token: session.token, retries: 0 });

      const registered = await run('register', session.token);
      expect(registered).toMatchObject({ step: 'answer', status: 200 });
      expect(registered.credential!.response.transports).toEqual(['internal']);
      const elevated = createClient({ baseUrl: app.baseUrl, token: registered.body!.token!, retries: 0 });
      expect(await elevated.sudoStatusGet()).toMatchObject({
        is_elevated: true,
        enrolled_methods: ['webauthn'],
      });

      const [stored] = await app.sql<{ credential_id: string; sign_count: string; transports: string[] }[]>`
        select credential_id, sign_count, transports from webauthn_credentials where user_id = ${session.user.id}`;
      expect(stored).toMatchObject({ credential_id: registered.credential!.id, transports: ['internal'] });

      const authenticated = await run('authenticate', session.token);
      expect(authenticated).toMatchObject({ step: 'answer', status: 200 });
      const token = authenticated.body!.token!;
      expect(
        (await createClient({ baseUrl: app.baseUrl, token, retries: 0 }).sudoStatusGet()).is_elevated,
      ).toBe(true);
      // The presented token stays un-elevated.
      expect((await api.sudoStatusGet()).is_elevated).toBe(false);

      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      expect(credentials).toHaveLength(1);
      const [after] = await app.sql<{ sign_count: string }[]>`
        select sign_count from webauthn_credentials where user_id = ${session.user.id}`;
      expect(Number(after!.sign_count)).toBe(credentials[0]!.signCount);
      expect(credentials[0]!.signCount).toBeGreaterThan(Number(stored!.sign_count));

      // The same authenticator cannot register twice: the options exclude the passkey it holds.
      const again = await run('register', token);
      expect(again).toMatchObject({ step: 'browser', error: 'InvalidStateError' });
    });
  },
);
