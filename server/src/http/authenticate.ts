// Resolves the caller of a secured operation. The session family is checked on every request, so a
// signed-out, deleted or password-changed session is refused at once (DECISIONS.md §3).
import { AccessTokenError, verifyAccessToken } from '../auth/crypto/access-tokens.js';
import { findLiveSession } from '../features/auth/store.js';
import { ApiError } from './errors.js';
import type { RequestContext, SessionAuth } from './handler.js';

export const unauthenticated = (detail = 'Sign in: the access token is missing, invalid or expired, or the session ended.') =>
  new ApiError(401, 'unauthenticated', detail, { headers: { 'WWW-Authenticate': 'Bearer' } });

/** The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1 token68), or null. */
export const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*)$/i;
export function bearerToken(authorization: string | undefined): string | null {
  return BEARER.exec(authorization ?? '')?.[1] ?? null;
}

export async function authenticate(authorization: string | undefined, ctx: RequestContext): Promise<SessionAuth> {
  const token = bearerToken(authorization);
  if (token === null) throw unauthenticated();
  const now = ctx.clock.now();
  let claims: Awaited<ReturnType<typeof verifyAccessToken>>;
  try {
    claims = await verifyAccessToken(ctx.keys, token, now);
  } catch (err) {
    // Only a bad token is the caller's fault; a failed key lookup is ours and stays a 500.
    if (err instanceof AccessTokenError) throw unauthenticated();
    throw err;
  }
  const session = await findLiveSession(ctx.sql, claims.sid, now);
  if (!session || session.user_id !== claims.sub) throw unauthenticated();
  return {
    kind: 'session',
    userId: claims.sub,
    sessionId: claims.sid,
    elevatedUntil: claims.elevatedUntil,
    tokenExpiresAt: claims.exp,
  };
}
