// The work of `GET /api/v2/me` (operation meGet) without the stack around it, for the benchmark's
// baselines (scripts/bench/server.ts `me-bare`, scripts/bench/fastify-me.ts `me-fastify`): the same
// calls, in the same order, as server/src/http/authenticate.ts and the meGet handler make: the access
// token verified by verifyAccessToken (jose, the key from the shared KeyRing), the session checked by
// findLiveSession, the user selected by findMe; the caller maps the row with toMe.
import { AccessTokenError, verifyAccessToken } from '../../server/src/auth/crypto/access-tokens.js';
import type { KeyRing } from '../../server/src/auth/crypto/signing-keys.js';
import type { Sql } from '../../server/src/db/client.js';
import { findLiveSession } from '../../server/src/features/auth/store.js';
import { findMe, type MeRow } from '../../server/src/features/me/store.js';

/** authenticate()'s own pattern for the Authorization header. */
export { BEARER } from '../../server/src/http/authenticate.js';

/** The caller's row, or null when the token, its session or the account does not hold (a 401). */
export async function findCaller(sql: Sql, keys: KeyRing, token: string, now: Date): Promise<MeRow | null> {
  let claims: Awaited<ReturnType<typeof verifyAccessToken>>;
  try {
    claims = await verifyAccessToken(keys, token, now);
  } catch (err) {
    if (err instanceof AccessTokenError) return null;
    throw err;
  }
  const session = await findLiveSession(sql, claims.sid, now);
  if (!session || session.user_id !== claims.sub) return null;
  return (await findMe(sql, claims.sub)) ?? null;
}

/** A refusal's body (the baselines answer 401 as the API does; never on the measured path). */
export const UNAUTHENTICATED = {
  type: '/docs/errors#unauthenticated',
  title: 'Unauthenticated',
  status: 401,
  detail: 'Sign in: the access token is missing, invalid or expired, or the session ended.',
  code: 'unauthenticated',
};
