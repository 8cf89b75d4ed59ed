// Password sign-in: the password, then a 6-digit code sent by mail (document 1, "Sign-in and sessions").
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { hashPassword, verifyPassword } from '../../auth/crypto/passwords.js';
import { digestCode, newLoginCode } from '../../auth/crypto/tokens.js';
import { ApiError, rateLimited } from '../../http/errors.js';
import type { AreaHandlers } from '../../http/handler.js';
import { enqueueMail } from '../../mail/outbox.js';
import { hit, scaled } from '../../ratelimit/limiter.js';
import { requireCaptcha } from './captcha.js';
import {
  CODE_MAX_ATTEMPTS,
  CODE_TTL_SECONDS,
  LOGIN_PER_ADDRESS,
  LOGIN_PER_ADDRESS_AND_SOURCE,
  LOGIN_PER_SOURCE,
  VERIFY_PER_SOURCE,
} from './limits.js';
import { toAuthUser } from './mappers.js';
import { unlockAfterSignIn } from '../sudo/store.js';
import { issueSession } from './session-tokens.js';
import * as store from './store.js';

export const invalidCredentials = (detail = 'The email address or password is wrong.') =>
  new ApiError(401, 'invalid-credentials', detail);

export const loginHandlers: AreaHandlers<'authLogin' | 'authLoginVerify'> = {
  async authLogin({ body, ctx }) {
    await requireCaptcha(ctx, 'login');
    const now = ctx.clock.now();
    const email = body.email.toLowerCase();
    const bySource = await hit(ctx.sql, scaled(LOGIN_PER_SOURCE, ctx.config.sourceRateLimitScale), ctx.ip, now);
    const byPair = await hit(ctx.sql, LOGIN_PER_ADDRESS_AND_SOURCE, `${email} ${ctx.ip}`, now);
    // The account-wide count is spent only by attempts the source's own limits let through.
    const byAddress = bySource.allowed && byPair.allowed ? await hit(ctx.sql, LOGIN_PER_ADDRESS, email, now) : null;
    const refused = [bySource, byPair, byAddress].filter((l) => l !== null && !l.allowed);
    if (refused.length > 0) throw rateLimited(Math.max(...refused.map((l) => l!.retryAfterSeconds)));
    const user = await store.findUserByEmail(ctx.sql, email);
    // An unknown address is checked against a dummy hash: same answer, same time.
    const { ok, needsRehash } = await verifyPassword(user?.password_hash ?? null, body.password);
    if (!user || !ok || user.email === null) throw invalidCredentials();
    if (needsRehash) await store.setPasswordHash(ctx.sql, user.id, await hashPassword(body.password), now);

    const challengeId = randomUUID();
    const code = newLoginCode();
    await ctx.sql.begin(async (tx) => {
      await store.createLoginChallenge(
        tx,
        {
          id: challengeId,
          userId: user.id,
          codeDigest: digestCode(challengeId, code),
          expiresAt: new Date(now.getTime() + CODE_TTL_SECONDS * 1000),
          ip: ctx.ip,
          userAgent: ctx.userAgent?.slice(0, 512) ?? null,
        },
        now,
      );
      await enqueueMail(
        tx,
        { to: user.email!, kind: 'login_code', language: user.language, data: { code, expiresMinutes: CODE_TTL_SECONDS / 60 } },
        now,
      );
    });
    return { status: 200, body: { challenge_id: challengeId, status: 'code_sent' } };
  },

  async authLoginVerify({ body, ctx }) {
    const now = ctx.clock.now();
    const bySource = await hit(ctx.sql, scaled(VERIFY_PER_SOURCE, ctx.config.sourceRateLimitScale), ctx.ip, now);
    if (!bySource.allowed) throw rateLimited(bySource.retryAfterSeconds);
    const session = await ctx.sql.begin(async (tx) => {
      // The attempt is counted (and committed) before the code is compared: five wrong codes burn it.
      const challenge = await store.takeChallengeAttempt(tx, body.challenge_id, CODE_MAX_ATTEMPTS, now);
      if (!challenge) return null;
      const given = digestCode(body.challenge_id, body.code);
      if (given.length !== challenge.code_digest.length || !timingSafeEqual(given, challenge.code_digest)) return null;
      await store.consumeChallenge(tx, body.challenge_id, now);
      const user = await store.findUserById(tx, challenge.user_id);
      if (!user) return null;
      // The code reached the mailbox: that proves the address.
      await store.markEmailVerified(tx, user.id, now);
      // A fresh sign-in lifts the PIN lock of the absolute elevation-failure cap (sudo/elevation.ts).
      await unlockAfterSignIn(tx, user.id, now);
      return { ...(await issueSession(tx, ctx, user.id)), user: toAuthUser(user) };
    });
    if (!session) throw invalidCredentials('The code is wrong, spent or expired; sign in again for a new one.');
    return { status: 200, body: session };
  },
};
