// The OAuth tests' world: the app, a real OpenID provider on loopback (test/support/oidc.ts) and a
// browser played with fetch. PUBLIC_BASE_URL is the platform's public name (as behind a proxy), so
// the provider sends the browser to http://platform.test/...; the browser reaches the app there.
import { request } from 'node:http';
import { createClient, type components, type SvcClient } from '@svcplatform/sdk';
import { expect } from 'vitest';
import { API_BASE_PATH } from '../../server/src/spec.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { startTestIdp, type TestIdp } from '../support/oidc.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

export const PUBLIC_BASE_URL = 'http://platform.test';
/** The default allowlist entry: the dashboard's origin + /auth/callback. */
export const DASHBOARD_CALLBACK = `${PUBLIC_BASE_URL}/auth/callback`;
export const CLI_CALLBACK = 'http://127.0.0.1:8976/callback';
export const RESELLER_HOST = 'shop.reseller.test';

export type Session = components['schemas']['Session'];

export interface World {
  app: TestApp;
  smtp: TestSmtp;
  /** Provider `idp`, offered on the platform's hosts. */
  idp: TestIdp;
  /** Provider `spare`: a second provider (another client of its own provider), for links and cross-provider states. */
  spare: TestIdp;
  anon: SvcClient;
  close(): Promise<void>;
}

export const callbackPath = (provider: string) => `${API_BASE_PATH}/auth/oauth/${provider}/callback`;

export async function startWorld(
  extra: {
    providers?: Record<string, unknown>[];
    idps?: Record<string, TestIdp>;
    env?: Record<string, string>;
  } = {},
): Promise<World> {
  // A new world is a new browser: no cookie of another file's app (files share this module).
  jar.clear();
  const smtp = await startTestSmtp();
  const idp = await startTestIdp({ redirectUris: [`${PUBLIC_BASE_URL}${callbackPath('idp')}`] });
  const spare = await startTestIdp({ redirectUris: [`${PUBLIC_BASE_URL}${callbackPath('spare')}`] });
  const entry = (id: string, p: TestIdp, more: Record<string, unknown> = {}) => ({
    id,
    display_name: null,
    issuer: p.issuer,
    client_id: p.clientId,
    client_secret: p.clientSecret,
    ...more,
  });
  const app = await startTestApp({
    env: {
      SMTP_URL: smtp.url,
      SOURCE_RATE_LIMIT_SCALE: '1000',
      PUBLIC_BASE_URL,
      OAUTH_PROVIDERS: JSON.stringify([
        entry('idp', idp, { display_name: 'Test Identity' }),
        entry('spare', spare),
        entry('shop-only', idp, { hosts: [RESELLER_HOST] }),
        ...(extra.providers ?? []),
      ]),
      OAUTH_REDIRECT_ALLOWLIST: [DASHBOARD_CALLBACK, CLI_CALLBACK].join(','),
      ...extra.env,
    },
  });
  const anon = createClient({ baseUrl: app.baseUrl, retries: 0, fetch: browserFetch });
  return {
    app,
    smtp,
    idp,
    spare,
    anon,
    async close() {
      await app.close();
      await idp.close();
      await spare.close();
      await smtp.close();
    },
  };
}

/** The app, reached where the browser was sent (PUBLIC_BASE_URL stands for the app's address). */
export function viaApp(app: TestApp, url: URL | string): string {
  const u = new URL(url);
  expect(u.origin).toBe(PUBLIC_BASE_URL);
  return `${app.baseUrl}${u.pathname}${u.search}`;
}

export interface CallbackAnswer {
  status: number;
  /** The Location of a redirect, parsed. */
  location: URL | null;
  /** The problem's code, for a refusal. */
  code: string | null;
  body: unknown;
  headers: Headers;
}

/**
 * The browser's cookies for the API: what start answers set (the flow's binding, server/src/features/
 * oauth/browser.ts). The test's clients and the browser share it, as a dashboard and its browser do.
 */
const jar = new Map<string, string>();

/** fetch for the test's API clients: keeps the cookies the API sets. */
export const browserFetch = async (request: Request): Promise<Response> => {
  const response = await fetch(request);
  for (const cookie of response.headers.getSetCookie()) {
    const [pair] = cookie.split(';');
    const eq = pair!.indexOf('=');
    jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
  }
  return response;
};

const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');

/**
 * The browser arriving at the callback URL the provider sent it to; `otherBrowser` is a browser that
 * did not start the flow (a victim's, sent the attacker's URL).
 */
export async function arrive(
  app: TestApp,
  callback: URL | string,
  accept = 'text/html,*/*',
  options: { otherBrowser?: boolean } = {},
): Promise<CallbackAnswer> {
  const headers: Record<string, string> = { accept };
  if (!options.otherBrowser && jar.size > 0) headers.cookie = cookieHeader();
  const res = await fetch(viaApp(app, callback), { redirect: 'manual', headers });
  const text = await res.text();
  const body = text ? (JSON.parse(text) as unknown) : null;
  const location = res.headers.get('location');
  return {
    status: res.status,
    location: location ? new URL(location) : null,
    code: (body as { code?: string } | null)?.code ?? null,
    body,
    headers: res.headers,
  };
}

/** Start (a link flow with `link`), the provider's login as `subject`, and the callback: the redirect's target. */
export async function flow(w: World, subject: string, options: FlowOptions = {}): Promise<URL> {
  const answer = await arrive(w.app, await toCallback(w, subject, options));
  expect(answer.status, JSON.stringify(answer.body)).toBe(307);
  return answer.location!;
}

export interface FlowOptions {
  provider?: 'idp' | 'spare';
  link?: SvcClient;
  query?: Record<string, string>;
  redirectTo?: string;
}

/** Start and the provider's login: the callback URL the provider sent the browser to (not yet visited). */
export async function toCallback(
  w: World,
  subject: string | { deny: true },
  options: FlowOptions = {},
): Promise<URL> {
  const provider = options.provider ?? 'idp';
  const query = { redirect_to: options.redirectTo ?? DASHBOARD_CALLBACK, ...options.query };
  const started = options.link
    ? await options.link.oauthLinkStart({ path: { provider }, query })
    : await w.anon.oauthSignInStart({ path: { provider }, query });
  const idp = provider === 'idp' ? w.idp : w.spare;
  return idp.authorize(started.redirect_to, typeof subject === 'string' ? { subject } : subject);
}

/** A whole sign-in through the provider, redeemed: the session. */
export async function oauthSignIn(
  w: World,
  subject: string,
  query: Record<string, string> = {},
): Promise<Session> {
  const back = await flow(w, subject, { query });
  const key = back.searchParams.get('key');
  expect(key, back.href).toBeTruthy();
  return w.anon.oauthComplete({ body: { key: key! } });
}

export const clientOf = (app: TestApp, token: string): SvcClient =>
  createClient({ baseUrl: app.baseUrl, token, retries: 0, fetch: browserFetch });

/** A GET with a Host header of our choosing (fetch always sends the URL's own). */
export function getWithHost(
  app: TestApp,
  path: string,
  host: string,
): Promise<{ status: number; body: unknown }> {
  const url = new URL(`${app.baseUrl}${API_BASE_PATH}${path}`);
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Rows a refusal must leave alone. */
export async function counts(app: TestApp): Promise<Record<string, number>> {
  const [row] = await app.sql<Record<string, number>[]>`
    select (select count(*)::int from users) as users,
           (select count(*)::int from organizations) as organizations,
           (select count(*)::int from oauth_accounts) as links,
           (select count(*)::int from oauth_flows) as flows,
           (select count(*)::int from oauth_completions) as completions,
           (select count(*)::int from sessions) as sessions,
           (select count(*)::int from assets) as assets`;
  return row!;
}
