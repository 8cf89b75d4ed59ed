// Password signup, verification, forgot/reset, change and set. Signup, verify, forgot and reset answer
// alike for known and unknown addresses; a limit tripped on them looks like success.
import { checkPasswordPolicy, hashPassword, verifyPassword } from '../../auth/crypto/passwords.js';
import { digestEmailToken, newEmailToken } from '../../auth/crypto/tokens.js';
import type { Db } from '../../db/client.js';
import { ApiError, invalidFieldValue, rateLimited } from '../../http/errors.js';
import type { AreaHandlers, RequestContext } from '../../http/handler.js';
import { enqueueMail } from '../../mail/outbox.js';
import { createPersonalOrganization } from '../organizations/personal.js';
import { hit, scaled, type Limit } from '../../ratelimit/limiter.js';
import { requireCaptcha } from './captcha.js';
import {
  FORGOT_PER_ADDRESS,
  FORGOT_PER_SOURCE,
  PASSWORD_CHANGE_PER_USER,
  RESET_LINK_TTL_SECONDS,
  SIGNUP_PER_ADDRESS,
  SIGNUP_PER_SOURCE,
  VERIFY_LINK_TTL_SECONDS,
} from './limits.js';
import { ACCEPTED } from './mappers.js';
import { linkBase } from './origin.js';
import * as store from './store.js';

function requirePolicy(password: string, pointer: string, email?: string | null): void {
  const verdict = checkPasswordPolicy(password, { email: email ?? undefined });
  if (!verdict.ok) throw invalidFieldValue(verdict.message, [{ location: 'body', pointer, message: verdict.message }]);
}

const badToken = () =>
  invalidFieldValue('The link is invalid, expired or already used.', [
    { location: 'body', pointer: '/token', message: 'is invalid, expired or already used' },
  ]);

/** True when both the per-source and the per-address limits allow one more. */
async function withinLimits(ctx: RequestContext, perSource: Limit, perAddress: Limit, address: string): Promise<boolean> {
  const now = ctx.clock.now();
  const bySource = await hit(ctx.sql, scaled(perSource, ctx.config.sourceRateLimitScale), ctx.ip, now);
  const byAddress = await hit(ctx.sql, perAddress, address, now);
  return bySource.allowed && byAddress.allowed;
}

async function sendResetLink(
  tx: Db,
  ctx: RequestContext,
  user: { id: string; email: string | null; language: string },
  base: string,
): Promise<void> {
  if (!user.email) return;
  const now = ctx.clock.now();
  const token = newEmailToken();
  await store.expireEmailTokens(tx, user.id, 'password_reset', now);
  await store.createEmailToken(
    tx,
    {
      userId: user.id,
      purpose: 'password_reset',
      digest: digestEmailToken(token),
      expiresAt: new Date(now.getTime() + RESET_LINK_TTL_SECONDS * 1000),
    },
    now,
  );
  const link = `${base}/auth/reset-password?token=${encodeURIComponent(token)}`;
  await enqueueMail(tx, { to: user.email, kind: 'password_reset', language: user.language, data: { link } }, now);
}

export const passwordHandlers: AreaHandlers<
  | 'authPasswordSignup'
  | 'authPasswordVerify'
  | 'authPasswordForgot'
  | 'authPasswordForgotCurrent'
  | 'authPasswordReset'
  | 'authPasswordChange'
  | 'authPasswordSet'
> = {
  async authPasswordSignup({ body, ctx }) {
    await requireCaptcha(ctx, 'signup');
    const base = linkBase(ctx.config, body.origin);
    requirePolicy(body.password, '/password', body.email);
    const email = body.email.toLowerCase();
    // Hashed whether or not the address is taken, so both paths cost the same.
    const hash = await hashPassword(body.password);
    if (!(await withinLimits(ctx, SIGNUP_PER_SOURCE, SIGNUP_PER_ADDRESS, email))) return { status: 200, body: ACCEPTED };
    const now = ctx.clock.now();
    await ctx.sql.begin(async (tx) => {
      const created = await store.createUser(
        tx,
        { email, passwordHash: hash, name: body.name?.trim() || email.split('@')[0]!, language: body.language ?? 'en' },
        now,
      );
      if (!created) {
        // The account exists: nothing on it changes; its owner hears of the attempt.
        const owner = await store.findUserByEmail(tx, email);
        if (owner?.email) {
          await enqueueMail(
            tx,
            {
              to: owner.email,
              kind: 'signup_existing_account',
              language: owner.language,
              data: { loginLink: `${base}/auth/login`, resetLink: `${base}/auth/forgot-password` },
            },
            now,
          );
        }
        return;
      }
      await createPersonalOrganization(tx, created, now);
      const token = newEmailToken();
      await store.createEmailToken(
        tx,
        {
          userId: created.id,
          purpose: 'verify_email',
          digest: digestEmailToken(token),
          expiresAt: new Date(now.getTime() + VERIFY_LINK_TTL_SECONDS * 1000),
        },
        now,
      );
      const link = `${base}/auth/verify-email?token=${encodeURIComponent(token)}`;
      await enqueueMail(tx, { to: email, kind: 'verify_email', language: created.language, data: { link } }, now);
    });
    return { status: 200, body: ACCEPTED };
  },

  async authPasswordVerify({ body, ctx }) {
    const now = ctx.clock.now();
    const verified = await ctx.sql.begin(async (tx) => {
      const spent = await store.spendEmailToken(tx, 'verify_email', digestEmailToken(body.token), now);
      if (spent) await store.markEmailVerified(tx, spent.user_id, now);
      return spent !== undefined;
    });
    if (!verified) throw badToken();
    return { status: 200, body: ACCEPTED };
  },

  async authPasswordForgot({ body, ctx }) {
    await requireCaptcha(ctx, 'password_forgot');
    const base = linkBase(ctx.config, body.origin);
    const email = body.email.toLowerCase();
    if (!(await withinLimits(ctx, FORGOT_PER_SOURCE, FORGOT_PER_ADDRESS, email))) return { status: 200, body: ACCEPTED };
    await ctx.sql.begin(async (tx) => {
      const user = await store.findUserByEmail(tx, email);
      if (user) await sendResetLink(tx, ctx, user, base);
    });
    return { status: 200, body: ACCEPTED };
  },

  async authPasswordForgotCurrent({ body, auth, ctx }) {
    const base = linkBase(ctx.config, body?.origin);
    const user = await store.findUserById(ctx.sql, auth.userId);
    if (!user?.email) return { status: 200, body: ACCEPTED };
    if (!(await withinLimits(ctx, FORGOT_PER_SOURCE, FORGOT_PER_ADDRESS, user.email))) return { status: 200, body: ACCEPTED };
    await ctx.sql.begin((tx) => sendResetLink(tx, ctx, user, base));
    return { status: 200, body: ACCEPTED };
  },

  async authPasswordReset({ body, ctx }) {
    requirePolicy(body.password, '/password');
    const hash = await hashPassword(body.password);
    const now = ctx.clock.now();
    const done = await ctx.sql.begin(async (tx) => {
      const spent = await store.spendEmailToken(tx, 'password_reset', digestEmailToken(body.token), now);
      if (!spent) return false;
      const user = await store.findUserById(tx, spent.user_id);
      if (!user) return false;
      await store.setPasswordHash(tx, user.id, hash, now);
      await store.markEmailVerified(tx, user.id, now);
      await store.revokeUserSessions(tx, user.id, 'password_reset', now);
      if (user.email) await enqueueMail(tx, { to: user.email, kind: 'password_changed', language: user.language, data: {} }, now);
      return true;
    });
    if (!done) throw badToken();
    return { status: 200, body: ACCEPTED };
  },

  async authPasswordChange({ body, auth, ctx }) {
    const now = ctx.clock.now();
    const limit = await hit(ctx.sql, PASSWORD_CHANGE_PER_USER, auth.userId, now);
    if (!limit.allowed) throw rateLimited(limit.retryAfterSeconds);
    const user = await store.findUserById(ctx.sql, auth.userId);
    const { ok } = await verifyPassword(user?.password_hash ?? null, body.current_password);
    if (!user || !ok) {
      throw invalidFieldValue('The current password is wrong.', [
        { location: 'body', pointer: '/current_password', message: 'is wrong' },
      ]);
    }
    requirePolicy(body.new_password, '/new_password', user.email);
    const hash = await hashPassword(body.new_password);
    await ctx.sql.begin(async (tx) => {
      await store.setPasswordHash(tx, user.id, hash, now);
      await store.revokeUserSessions(tx, user.id, 'password_changed', now, body.current_session_id ?? null);
      if (user.email) await enqueueMail(tx, { to: user.email, kind: 'password_changed', language: user.language, data: {} }, now);
    });
    return { status: 200, body: ACCEPTED };
  },

  async authPasswordSet({ body, auth, ctx }) {
    const user = await store.findUserById(ctx.sql, auth.userId);
    requirePolicy(body.new_password, '/new_password', user?.email);
    const hash = await hashPassword(body.new_password);
    const set = await store.setFirstPasswordHash(ctx.sql, auth.userId, hash, ctx.clock.now());
    if (!set) throw new ApiError(422, 'password-already-set', 'This account has a password already; change it instead.');
    return { status: 200, body: ACCEPTED };
  },
};
