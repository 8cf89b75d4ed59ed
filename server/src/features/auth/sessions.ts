// Refresh, the current session, logout and the caller's session list.
import { AccessTokenError, verifyAccessToken } from '../../auth/crypto/access-tokens.js';
import { digestToken } from '../../auth/crypto/tokens.js';
import { bearerToken, unauthenticated } from '../../http/authenticate.js';
import type { AreaHandlers, RequestContext } from '../../http/handler.js';
import { ELEVATION_WINDOW_SECONDS } from './limits.js';
import { toAuthUser, toSessionEntry } from './mappers.js';
import { rotateRefreshToken } from './session-tokens.js';
import * as store from './store.js';

export const sessionHandlers: AreaHandlers<
  'authRefresh' | 'authSessionGet' | 'authLogout' | 'meSessionsList' | 'meSessionDelete'
> = {
  async authRefresh({ body, ctx }) {
    const elevation = await elevationSentAlong(ctx);
    const outcome = await ctx.sql.begin((tx) => rotateRefreshToken(tx, ctx, body.refresh_token, elevation));
    if (outcome.kind === 'reuse') {
      // RFC 9700 §4.14.2: a spent token presented again may be stolen; end the whole family.
      await store.revokeSession(ctx.sql, outcome.sessionId, 'refresh_token_reuse', ctx.clock.now());
      ctx.log.warn({ request_id: ctx.requestId, session_id: outcome.sessionId }, 'refresh token reuse: session revoked');
    }
    if (outcome.kind !== 'rotated') throw unauthenticated('The refresh token is invalid, expired or already used.');
    return {
      status: 200,
      body: { token: outcome.token, refresh_token: outcome.refresh_token, session_id: outcome.session_id },
    };
  },

  async authSessionGet({ auth, ctx }) {
    const user = await store.findUserById(ctx.sql, auth.userId);
    if (!user) throw unauthenticated();
    return {
      status: 200,
      body: { session_id: auth.sessionId, user: toAuthUser(user), expires_at: auth.tokenExpiresAt.toISOString() },
    };
  },

  async authLogout({ body, auth, ctx }) {
    const now = ctx.clock.now();
    await ctx.sql.begin(async (tx) => {
      const found = await store.lockRefreshToken(tx, digestToken(body.refresh_token));
      // Only the caller's own family ends; someone else's token changes nothing.
      if (found && found.session.user_id === auth.userId) await store.revokeSession(tx, found.session.id, 'logout', now);
    });
    return { status: 204 };
  },

  async meSessionsList({ auth, ctx }) {
    const rows = await store.listLiveSessions(ctx.sql, auth.userId, ctx.clock.now());
    return { status: 200, body: { data: rows.map((s) => toSessionEntry(s, auth.sessionId)) } };
  },

  async meSessionDelete({ path, auth, ctx }) {
    await store.revokeOwnSession(ctx.sql, auth.userId, path.session_id, 'deleted', ctx.clock.now());
    return { status: 204 };
  },
};

/**
 * The elevated window of an access token sent in Authorization with a refresh (seed document 1,
 * "Authentication": refresh carries elevation forward only then). The token may have expired (it
 * lives an hour, the window eight), but its signature must hold and its window must still be open;
 * anything else carries nothing and does not fail the refresh.
 */
async function elevationSentAlong(ctx: RequestContext): Promise<{ sessionId: string; until: Date; epoch: number } | null> {
  const token = bearerToken(ctx.header('authorization'));
  if (token === null) return null;
  try {
    const claims = await verifyAccessToken(ctx.keys, token, ctx.clock.now(), {
      expiredToleranceSeconds: ELEVATION_WINDOW_SECONDS,
    });
    return claims.elevatedUntil ? { sessionId: claims.sid, until: claims.elevatedUntil, epoch: claims.elevationEpoch } : null;
  } catch (err) {
    if (err instanceof AccessTokenError) return null;
    throw err;
  }
}
