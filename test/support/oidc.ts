// A real OpenID provider on loopback (oidc-provider 9) for the OAuth tests: discovery, JWKS, the
// authorization endpoint with its login interaction, the token endpoint (PKCE required) and userinfo,
// plus pictures served from the issuer's own origin. Tests play the browser with plain fetch: they
// follow the provider's redirects with its cookies, choose the account at the login interaction (or
// refuse there), and stop at the redirect that leaves the provider, which is the callback URL.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import { Provider, type AccountClaims } from 'oidc-provider';

/** What the provider says of a person; change it between sign-ins to see what the service does. */
export interface IdpAccount {
  email?: string | null;
  email_verified?: boolean;
  name?: string;
  locale?: string;
  /** A URL; `idp.pictureUrl(name)` serves from the issuer's origin. */
  picture?: string | null;
}

export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Accounts by subject. */
  accounts: Map<string, IdpAccount>;
  /** Serves `bytes` at the issuer's origin; answers the URL. */
  servePicture(name: string, bytes: Buffer, contentType?: string): string;
  /** Requests for pictures so far. */
  pictureRequests: number;
  /**
   * Plays the browser from `authorizeUrl` to the redirect that leaves the provider: signs in as
   * `subject`, or refuses at the login (`deny`). Answers that redirect's URL (the callback).
   */
  authorize(authorizeUrl: string, as: { subject: string } | { deny: true }): Promise<URL>;
  /** Stops answering (a provider that is down); connections are refused from then on. */
  close(): Promise<void>;
}

export async function startTestIdp(options: { redirectUris: string[] }): Promise<TestIdp> {
  const clientId = `client-${randomBytes(4).toString('hex')}`;
  const clientSecret = randomBytes(24).toString('base64url');
  const accounts = new Map<string, IdpAccount>();
  const pictures = new Map<string, { bytes: Buffer; contentType: string }>();
  let pictureRequests = 0;
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  const server: Server = createServer((req, res) => handler(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = {
    ...(await exportJWK(privateKey)),
    alg: 'RS256',
    use: 'sig',
    kid: randomBytes(6).toString('hex'),
  };

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    pkce: { required: () => true },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'locale', 'picture'],
    },
    features: { devInteractions: { enabled: false } },
    // Lifetimes given, so the provider does not warn about its defaults.
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      IdToken: 600,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
    },
    findAccount(_ctx: unknown, sub: string) {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return {
        accountId: sub,
        claims(): AccountClaims {
          const a = accounts.get(sub) ?? {};
          const claims: AccountClaims = { sub };
          for (const [k, v] of Object.entries(a)) if (v !== undefined && v !== null) claims[k] = v;
          return claims;
        },
      };
    },
    // A first-party provider: every scope asked for is granted, so the only interaction is the login.
    async loadExistingGrant(ctx) {
      const { oidc } = ctx;
      const existing = oidc.result?.consent?.grantId ?? oidc.session.grantIdFor(oidc.client.clientId);
      if (existing) return oidc.provider.Grant.find(existing);
      if (!oidc.session.accountId) return undefined;
      const grant = new oidc.provider.Grant({
        accountId: oidc.session.accountId,
        clientId: oidc.client.clientId,
      });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  });
  const callback = provider.callback();

  handler = (req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    const picture = /^\/pictures\/([\w.-]+)$/.exec(url.pathname);
    if (picture) {
      pictureRequests += 1;
      const found = pictures.get(picture[1]!);
      res.statusCode = found ? 200 : 404;
      if (found) res.setHeader('content-type', found.contentType);
      res.end(found?.bytes);
      return;
    }
    if (/^\/interaction\/[\w-]+$/.test(url.pathname)) {
      // The login page, submitted at once: ?subject=SUB signs in as SUB, ?deny=1 refuses.
      void (async () => {
        try {
          await provider.interactionDetails(req, res);
          const subject = url.searchParams.get('subject');
          const result =
            url.searchParams.get('deny') === '1' || subject === null
              ? { error: 'access_denied', error_description: 'The person refused.' }
              : { login: { accountId: subject } };
          await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
        } catch (err) {
          res.statusCode = 400;
          res.end(err instanceof Error ? err.message : 'interaction failed');
        }
      })();
      return;
    }
    callback(req, res);
  };

  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    servePicture(name, bytes, contentType = 'image/png') {
      pictures.set(name, { bytes, contentType });
      return `${issuer}/pictures/${name}`;
    },
    get pictureRequests() {
      return pictureRequests;
    },
    async authorize(authorizeUrl, as) {
      const cookies = new Map<string, string>();
      let url = new URL(authorizeUrl);
      for (let hop = 0; hop < 10; hop += 1) {
        if (url.origin !== issuer) return url;
        if (url.pathname.startsWith('/interaction/')) {
          if ('deny' in as) url.searchParams.set('deny', '1');
          else url.searchParams.set('subject', as.subject);
        }
        const res = await fetch(url, {
          redirect: 'manual',
          headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
        });
        for (const line of res.headers.getSetCookie()) {
          const [pair] = line.split(';');
          const eq = pair!.indexOf('=');
          cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
        }
        const location = res.headers.get('location');
        if (res.status < 300 || res.status >= 400 || !location) {
          throw new Error(
            `the provider answered ${res.status} at ${url.pathname}: ${(await res.text()).slice(0, 300)}`,
          );
        }
        await res.body?.cancel();
        url = new URL(location, url);
      }
      throw new Error('too many redirects at the provider');
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
