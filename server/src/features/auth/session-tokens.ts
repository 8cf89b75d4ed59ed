// Issuing and rotating the token pair of a session family (DECISIONS.md §3, RFC 9700 §4.14.2).
import { signAccessToken } from '../../auth/crypto/access-tokens.js';
import { digestToken, newRefreshToken, successorRefreshToken } from '../../auth/crypto/tokens.js';
import type { Db } from '../../db/client.js';
import type { RequestContext } from '../../http/handler.js';
import { ACCESS_TOKEN_TTL_SECONDS, ELEVATED_TOKEN_TTL_SECONDS, REFRESH_ABSOLUTE_TTL_SECONDS, REFRESH_GRACE_SECONDS } from './limits.js';
import * as store from './store.js';

const after = (now: Date, seconds: number) => new Date(now.getTime() + seconds * 1000);

export async function issueSession(
  tx: Db,
  ctx: RequestContext,
  userId: string,
): Promise<{ token: string; refresh_token: string; session_id: string }> {
  const now = ctx.clock.now();
  const session = await store.createSession(
    tx,
    {
      userId,
      absoluteExpiresAt: after(now, REFRESH_ABSOLUTE_TTL_SECONDS),
      idleExpiresAt: after(now, ctx.config.refreshIdleTtlSeconds),
      userAgent: ctx.userAgent?.slice(0, 512) ?? null,
      ip: ctx.ip,
    },
    now,
  );
  const refresh = newRefreshToken();
  await store.insertRefreshToken(tx, session.id, digestToken(refresh), now);
  const access = await signAccessToken(ctx.keys, { sub: userId, sid: session.id, ttlSeconds: ACCESS_TOKEN_TTL_SECONDS }, now);
  return { token: access.token, refresh_token: refresh, session_id: session.id };
}

export type RotateOutcome =
  | { kind: 'rotated'; token: string; refresh_token: string; session_id: string }
  | { kind: 'refused' }
  | { kind: 'reuse'; sessionId: string };

/**
 * Spends a refresh token. The successor is derived from the presented token with the server pepper,
 * so a retry of the same token inside the grace window (two tabs refreshing at once) is handed the
 * same successor without any plaintext being stored; outside it, a spent token is reuse.
 */
export async function rotateRefreshToken(
  tx: Db,
  ctx: RequestContext,
  presented: string,
  /** The elevated window of an access token sent along, carried over when it is of this session. */
  elevation: { sessionId: string; until: Date; epoch: number } | null = null,
): Promise<RotateOutcome> {
  const now = ctx.clock.now();
  const found = await store.lockRefreshToken(tx, digestToken(presented));
  if (!found) return { kind: 'refused' };
  const { token, session } = found;
  if (session.revoked_at || session.absolute_expires_at <= now || session.idle_expires_at <= now) {
    return { kind: 'refused' };
  }
  const successor = successorRefreshToken(presented, await ctx.pepper());
  const successorDigest = digestToken(successor);
  if (token.spent_at) {
    const withinGrace = now.getTime() - token.spent_at.getTime() <= REFRESH_GRACE_SECONDS * 1000;
    if (!withinGrace) return { kind: 'reuse', sessionId: session.id };
    const live = await store.lockRefreshToken(tx, successorDigest);
    // The successor was itself spent already: no honest tab refreshes twice within the grace (access
    // tokens live 15 minutes), so this is a replay and the family ends (RFC 9700 §4.14.2).
    if (!live || live.token.spent_at) return { kind: 'reuse', sessionId: session.id };
  } else {
    await store.spendRefreshToken(tx, token.id, successorDigest, now);
    await store.insertRefreshToken(tx, session.id, successorDigest, now);
    await store.touchSession(tx, session.id, after(now, ctx.config.refreshIdleTtlSeconds), now, ctx.ip);
  }
  // Carried only within the session's current elevation epoch: after leaving elevation, nothing is.
  const carried =
    elevation &&
    elevation.sessionId === session.id &&
    elevation.epoch === session.elevation_epoch &&
    elevation.until > now
      ? elevation.until
      : null;
  const access = await signAccessToken(
    ctx.keys,
    carried
      ? {
          sub: session.user_id,
          sid: session.id,
          elevatedUntil: carried,
          elevationEpoch: session.elevation_epoch,
          ttlSeconds: ELEVATED_TOKEN_TTL_SECONDS,
        }
      : { sub: session.user_id, sid: session.id, ttlSeconds: ACCESS_TOKEN_TTL_SECONDS },
    now,
  );
  return { kind: 'rotated', token: access.token, refresh_token: successor, session_id: session.id };
}
