// Sign-in with external OpenID providers and linked identities (seed document 1, "OAuth", "Linked OAuth
// account"; DECISIONS.md §4 OAuth). The browser flow: start (the provider's URL), the provider, the
// callback (a redirect to redirect_to with a completion key, a link notice or an error), complete (the
// key for a session).
import { recordPlatformEvent } from '../../audit/record.js';
import { digestToken } from '../../auth/crypto/tokens.js';
import { invalidFieldValue, notFound, rateLimited, unprocessable } from '../../http/errors.js';
import type { AreaHandlers, QueryOf, RequestContext } from '../../http/handler.js';
import { hit, scaled, type Limit } from '../../ratelimit/limiter.js';
import { invalidCredentials } from '../auth/login.js';
import { toAuthUser } from '../auth/mappers.js';
import { issueSession } from '../auth/session-tokens.js';
import { findUserById } from '../auth/store.js';
import { deleteAsset } from '../public/store.js';
import { unlockAfterSignIn } from '../sudo/store.js';
import { resolveIdentity } from './identity.js';
import { toLinkedAccount, toProvider } from './mappers.js';
import { syncPicture } from './picture-sync.js';
import { authorizationRequest, identityFromCallback, type FlowSecrets } from './provider-identity.js';
import { configuredProvider, providerOnHost, providersForHost } from './providers.js';
import { requireAllowedRedirect, wantsJson, withOutcome, type Outcome } from './redirect.js';
import { carriesBinding, needsBrowser, newBinding } from './browser.js';
import * as store from './store.js';

const MINUTE = 60;
/** A flow from start to callback: long enough for a person at the provider's login page. */
const FLOW_TTL_SECONDS = 10 * MINUTE;
/** The seeds fix none of these; per source, so they scale with SOURCE_RATE_LIMIT_SCALE. */
const START_PER_SOURCE: Limit = { name: 'oauth-start:source', max: 60, windowSeconds: 15 * MINUTE };
const COMPLETE_PER_SOURCE: Limit = { name: 'oauth-complete:source', max: 30, windowSeconds: 15 * MINUTE };
/** Nothing of a flow belongs in a cache or a Referer. */
const PRIVATE = { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' };

type StartQuery = QueryOf<'oauthSignInStart'>;

/** The authorization URL of a new flow, or redirect_to?error=login_failed when the provider is unreachable. */
async function startFlow(
  ctx: RequestContext,
  providerId: string,
  query: StartQuery,
  binding: { purpose: 'sign_in' } | { purpose: 'link'; userId: string; sessionId: string },
): Promise<{ status: 200; body: { redirect_to: string }; headers: Record<string, string> }> {
  const provider = await providerOnHost(ctx.sql, ctx.config, ctx.host, providerId);
  if (!provider) throw notFound(`No provider "${providerId}" is offered here.`);
  const redirectTo = requireAllowedRedirect(ctx.config, query.redirect_to);
  const now = ctx.clock.now();
  const limit = await hit(ctx.sql, scaled(START_PER_SOURCE, ctx.config.sourceRateLimitScale), ctx.ip, now);
  if (!limit.allowed) throw rateLimited(limit.retryAfterSeconds);
  const signIn = binding.purpose === 'sign_in';
  if (signIn && query.reseller_id && !(await store.findReseller(ctx.sql, query.reseller_id))) {
    throw invalidFieldValue('No reseller has this id.', [
      { location: 'query', pointer: 'reseller_id', message: 'is not a reseller' },
    ]);
  }
  let request: Awaited<ReturnType<typeof authorizationRequest>>;
  try {
    request = await authorizationRequest(ctx.config, provider);
  } catch (err) {
    ctx.log.warn(
      { request_id: ctx.requestId, provider: provider.id, cause: describe(err) },
      'oauth provider unreachable',
    );
    return {
      status: 200,
      body: { redirect_to: withOutcome(redirectTo, { error: 'login_failed' }) },
      headers: PRIVATE,
    };
  }
  const stateDigest = digestToken(request.state);
  const browser = needsBrowser(binding.purpose, redirectTo)
    ? newBinding(stateDigest, ctx.config.publicBaseUrl.startsWith('https:'), FLOW_TTL_SECONDS)
    : null;
  await store.createFlow(
    ctx.sql,
    {
      stateDigest,
      browserDigest: browser?.digest ?? null,
      providerId: provider.id,
      purpose: binding.purpose,
      userId: binding.purpose === 'link' ? binding.userId : null,
      sessionId: binding.purpose === 'link' ? binding.sessionId : null,
      redirectTo,
      secretsSealed: await ctx.box.seal('oauth-flow', JSON.stringify(request.secrets)),
      // The link flow's own account exists: referral and reseller are the sign-up's alone.
      referralCode: signIn ? (query.referral_code ?? null) : null,
      resellerId: signIn ? (query.reseller_id ?? null) : null,
      expiresAt: new Date(now.getTime() + FLOW_TTL_SECONDS * 1000),
    },
    now,
  );
  const headers = browser ? { ...PRIVATE, 'Set-Cookie': browser.cookie } : PRIVATE;
  return { status: 200, body: { redirect_to: request.url }, headers };
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return 'unknown';
  const code = (err as { code?: unknown }).code;
  return `${err.name}${typeof code === 'string' ? ` ${code}` : ''}: ${err.message}`.slice(0, 300);
}

export const oauthHandlers: AreaHandlers<
  | 'oauthProviderList'
  | 'oauthSignInStart'
  | 'oauthLinkStart'
  | 'oauthCallback'
  | 'oauthComplete'
  | 'oauthAccountList'
  | 'oauthAccountUnlink'
> = {
  async oauthProviderList({ ctx }) {
    const providers = await providersForHost(ctx.sql, ctx.config, ctx.host);
    return { status: 200, body: providers.map(toProvider) };
  },

  oauthSignInStart: ({ path, query, ctx }) => startFlow(ctx, path.provider, query, { purpose: 'sign_in' }),

  oauthLinkStart: ({ path, query, auth, ctx }) =>
    startFlow(ctx, path.provider, query, { purpose: 'link', userId: auth.userId, sessionId: auth.sessionId }),

  async oauthCallback({ path, query, ctx }) {
    const provider = configuredProvider(ctx.config, path.provider);
    if (!provider) throw notFound(`No provider "${path.provider}" is configured.`);
    if (query.code === undefined && query.error === undefined) {
      throw invalidFieldValue('code is required unless the provider sent error.', [
        { location: 'query', pointer: 'code', message: 'is required' },
      ]);
    }
    const now = ctx.clock.now();
    const stateDigest = digestToken(query.state);
    const spent = await store.spendFlow(ctx.sql, stateDigest, provider.id, now);
    if (!spent) {
      throw invalidFieldValue('state is not one this service issued for this provider.', [
        { location: 'query', pointer: 'state', message: 'is unknown' },
      ]);
    }
    const { flow, live } = spent;
    const answer = (outcome: Outcome) => {
      const target = withOutcome(flow.redirect_to, outcome);
      return wantsJson(ctx.header('accept'))
        ? { status: 200 as const, body: { redirect_to: target }, headers: PRIVATE }
        : { status: 307 as const, headers: { ...PRIVATE, Location: target } };
    };
    // Expired, or used already (a replay, or a reload of the callback page): nothing happens again.
    if (!live || query.error !== undefined) return answer({ error: 'login_failed' });
    // Finished in a browser other than the one that started it: spent, and nothing else happens.
    if (flow.browser_digest && !carriesBinding(ctx.header('cookie'), stateDigest, flow.browser_digest)) {
      ctx.log.warn({ request_id: ctx.requestId, provider: provider.id }, 'oauth callback from another browser');
      return answer({ error: 'login_failed' });
    }

    let identity;
    try {
      const secrets = JSON.parse(await ctx.box.openText('oauth-flow', flow.secrets_sealed)) as FlowSecrets;
      identity = await identityFromCallback(ctx.config, provider, query, query.state, secrets);
    } catch (err) {
      ctx.log.warn(
        { request_id: ctx.requestId, provider: provider.id, cause: describe(err) },
        'oauth callback refused',
      );
      return answer({ error: 'login_failed' });
    }
    const resolved = await resolveIdentity(ctx, provider, flow, identity);
    if (resolved.link) await syncPicture(ctx, provider, resolved.link, identity.picture, resolved.newAccount);
    return answer(resolved.outcome);
  },

  async oauthComplete({ body, ctx }) {
    const now = ctx.clock.now();
    const limit = await hit(
      ctx.sql,
      scaled(COMPLETE_PER_SOURCE, ctx.config.sourceRateLimitScale),
      ctx.ip,
      now,
    );
    if (!limit.allowed) throw rateLimited(limit.retryAfterSeconds);
    const session = await ctx.sql.begin(async (tx) => {
      const spent = await store.spendCompletion(tx, digestToken(body.key), now);
      if (!spent) return null;
      const user = await findUserById(tx, spent.user_id);
      if (!user) return null;
      // As a password sign-in: a fresh sign-in lifts the PIN lock (sudo/elevation.ts).
      await unlockAfterSignIn(tx, user.id, now);
      return { ...(await issueSession(tx, ctx, user.id)), user: toAuthUser(user) };
    });
    if (!session)
      throw invalidCredentials('The sign-in key is unknown, expired or already used; sign in again.');
    return { status: 200, body: session };
  },

  async oauthAccountList({ auth, ctx }) {
    const links = await store.listUserLinks(ctx.sql, auth.userId);
    return { status: 200, body: links.map(toLinkedAccount) };
  },

  async oauthAccountUnlink({ path, auth, ctx }) {
    await ctx.sql.begin(async (tx) => {
      // Two unlinks at once serialise here, so they cannot both see the other link still there.
      const account = await store.lockAccount(tx, auth.userId);
      const link = account && (await store.findUserLink(tx, auth.userId, path.provider));
      if (!link) throw notFound(`No "${path.provider}" identity is linked to your account.`);
      if (account.password_hash === null && (await store.countLinks(tx, auth.userId)) <= 1) {
        throw unprocessable(
          'last-sign-in-method',
          'This is the only way to sign in to this account: set a password first (POST /auth/password/set), then unlink it.',
        );
      }
      await store.deleteLink(tx, link.id);
      if (link.picture_asset_id) await deleteAsset(tx, link.picture_asset_id, 'avatar');
      await recordPlatformEvent(tx, ctx, {
        action: 'oauth_account.unlinked',
        target: { type: 'user', id: auth.userId },
        details: { provider_id: link.provider_id },
      });
    });
    return { status: 204 };
  },
};
