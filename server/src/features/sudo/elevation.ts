// What every elevation method shares: who may set one up, how attempts are counted and capped, and the
// elevated access token a success answers (document 1, "Elevation of a session", "Elevation").
import { signAccessToken } from '../../auth/crypto/access-tokens.js';
import type { ElevationMethodName } from '../../config.js';
import { ApiError, elevationRequired, forbidden, rateLimited } from '../../http/errors.js';
import type { RequestContext, SessionAuth } from '../../http/handler.js';
import { enqueueMail } from '../../mail/outbox.js';
import { hit, reset, type Limit } from '../../ratelimit/limiter.js';
import { ELEVATED_TOKEN_TTL_SECONDS, ELEVATION_WINDOW_SECONDS } from '../auth/limits.js';
import { findUserById } from '../auth/store.js';
import * as store from './store.js';

/** Seed "Limits": 5 attempts per 15 minutes per user, across methods and setup; never scaled. */
export const ELEVATION_ATTEMPTS: Limit = { name: 'elevation:user', max: 5, windowSeconds: 15 * 60 };
/** NIST SP 800-63B §5.2.2: at most 100 consecutive failures before the PIN is locked. */
export const ABSOLUTE_FAILURE_CAP = 100;


export function isElevated(auth: SessionAuth): boolean {
  // verifyAccessToken already reads a passed deadline as null.
  return auth.elevatedUntil !== null;
}

export async function enrolledMethods(ctx: RequestContext, userId: string): Promise<ElevationMethodName[]> {
  const [factors, passkeys] = await Promise.all([store.findFactors(ctx.sql, userId), store.countPasskeys(ctx.sql, userId)]);
  const methods: ElevationMethodName[] = [];
  if (factors?.pin_hash) methods.push('pin');
  if (factors?.totp_secret_sealed) methods.push('totp');
  if (passkeys > 0) methods.push('webauthn');
  return methods;
}

export function requireAvailable(ctx: RequestContext, method: ElevationMethodName): void {
  if (!ctx.config.elevationMethods.includes(method)) {
    throw forbidden(`This deployment does not offer ${method} elevation.`);
  }
}

/**
 * Setting up a method: the first one needs only a signed-in session; once any method exists, adding
 * or replacing one needs an elevated session, or a stolen session could swap the factor out.
 */
export async function requireSetupAllowed(ctx: RequestContext, auth: SessionAuth, method: ElevationMethodName): Promise<void> {
  requireAvailable(ctx, method);
  if (isElevated(auth)) return;
  if ((await enrolledMethods(ctx, auth.userId)).length > 0) {
    throw elevationRequired('Adding or replacing an elevation method needs an elevated session.');
  }
}

/**
 * Runs one elevation attempt. The attempt is counted before it is evaluated, in one statement
 * against the shared bucket, so parallel attempts across API processes evaluate at most five per
 * window. `run` answers a value on success; a refusal it throws (an ApiError) counts as a failure.
 * A success clears the window and the consecutive count.
 */
export async function elevationAttempt<T>(ctx: RequestContext, userId: string, run: () => Promise<T>): Promise<T> {
  const now = ctx.clock.now();
  const { allowed, retryAfterSeconds } = await hit(ctx.sql, ELEVATION_ATTEMPTS, userId, now);
  if (!allowed) throw rateLimited(retryAfterSeconds);
  let result: T;
  try {
    result = await run();
  } catch (err) {
    if (err instanceof ApiError && err.status === 400) await recordFailure(ctx, userId);
    throw err;
  }
  await reset(ctx.sql, ELEVATION_ATTEMPTS, userId);
  await store.resetFailures(ctx.sql, userId, ctx.clock.now());
  return result;
}

async function recordFailure(ctx: RequestContext, userId: string): Promise<void> {
  const now = ctx.clock.now();
  await ctx.sql.begin(async (tx) => {
    const failures = await store.recordFailure(tx, userId, now);
    if (failures < ABSOLUTE_FAILURE_CAP) return;
    if (!(await store.lockPin(tx, userId, now))) return;
    const user = await findUserById(tx, userId);
    if (user?.email) {
      await enqueueMail(tx, { to: user.email, kind: 'elevation_pin_locked', language: user.language, data: { failures } }, now);
    }
    ctx.log.warn({ request_id: ctx.requestId, user_id: userId, failures }, 'elevation PIN locked after consecutive failures');
  });
}

/** A new access token of the caller's session, elevated for the window from now. */
export async function elevatedToken(
  ctx: RequestContext,
  auth: SessionAuth,
): Promise<{ elevated_until: string; token: string }> {
  const now = ctx.clock.now();
  const until = new Date(Math.floor(now.getTime() / 1000) * 1000 + ELEVATION_WINDOW_SECONDS * 1000);
  const { token } = await signAccessToken(
    ctx.keys,
    {
      sub: auth.userId,
      sid: auth.sessionId,
      elevatedUntil: until,
      elevationEpoch: auth.elevationEpoch,
      ttlSeconds: ELEVATED_TOKEN_TTL_SECONDS,
    },
    now,
  );
  return { elevated_until: until.toISOString(), token };
}
