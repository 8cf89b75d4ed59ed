// Password signup, verification, forgot/reset, change and set. Signup, verify, forgot and reset answer
// alike for known and unknown addresses; a limit tripped on them looks like success.
import { checkPasswordPolicy, hashPassword, verifyPassword } from '../../auth/crypto/passwords.js';
import { digestEmailToken } from '../../auth/crypto/tokens.js';
import { ApiError, invalidFieldValue, rateLimited } from '../../http/errors.js';
import type { AreaHandlers, RequestContext } from '../../http/handler.js';
import { enqueueMail } from '../../mail/outbox.js';
import { checkName } from '../me/name-rules.js';
import { hit, scaled, type Limit } from '../../ratelimit/limiter.js';
import { mailResetLink, queuePasswordReset, queueSignup } from './account-jobs.js';
import { requireCaptcha } from './captcha.js';
import {
  FORGOT_PER_ADDRESS,
  FORGOT_PER_SOURCE,
  PASSWORD_CHANGE_PER_USER,
  SIGNUP_PER_ADDRESS,
  SIGNUP_PER_SOURCE,
} from './limits.js';
import { ACCEPTED } from './mappers.js';
import { linkBase } from './origin.js';
import * as store from './store.js';

/** A sign-up's name, under the one rule of every name a person gives (PATCH /me's, DECISIONS.md §7). */
function requireName(raw: string): string {
  const checked = checkName(raw);
  if (!checked.ok) throw invalidFieldValue(checked.message, [{ location: 'body', pointer: '/name', message: checked.reason }]);
  return checked.name;
}

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
    const name = body.name == null ? null : requireName(body.name);
    const email = body.email.toLowerCase();
    // Hashed whether or not the address is taken, so both paths cost the same.
    const hash = await hashPassword(body.password);
    if (!(await withinLimits(ctx, SIGNUP_PER_SOURCE, SIGNUP_PER_ADDRESS, email))) return { status: 200, body: ACCEPTED };
    // Whether the address has an account is the job's business (account-jobs.ts): nothing here
    // depends on it, so the answer cannot tell.
    await queueSignup(ctx.sql, { email, passwordHash: hash, name, language: body.language ?? 'en', base }, ctx.clock.now());
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
    // The lookup, the link and the mail are the job's (account-jobs.ts): one path for any address.
    await queuePasswordReset(ctx.sql, { email, base });
    return { status: 200, body: ACCEPTED };
  },

  async authPasswordForgotCurrent({ body, auth, ctx }) {
    const base = linkBase(ctx.config, body?.origin);
    const user = await store.findUserById(ctx.sql, auth.userId);
    if (!user?.email) return { status: 200, body: ACCEPTED };
    if (!(await withinLimits(ctx, FORGOT_PER_SOURCE, FORGOT_PER_ADDRESS, user.email))) return { status: 200, body: ACCEPTED };
    await ctx.sql.begin((tx) => mailResetLink(tx, user, base, ctx.clock.now()));
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
      // Every other reset link mailed before this one dies with the old password (DECISIONS.md §7).
      await store.expireEmailTokens(tx, user.id, 'password_reset', now);
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
      // A reset link mailed before the change must not undo it (DECISIONS.md §7).
      await store.expireEmailTokens(tx, user.id, 'password_reset', now);
      await store.revokeUserSessions(tx, user.id, 'password_changed', now, body.current_session_id ?? null);
      if (user.email) await enqueueMail(tx, { to: user.email, kind: 'password_changed', language: user.language, data: {} }, now);
    });
    return { status: 200, body: ACCEPTED };
  },

  async authPasswordSet({ body, auth, ctx }) {
    const user = await store.findUserById(ctx.sql, auth.userId);
    requirePolicy(body.new_password, '/new_password', user?.email);
    const hash = await hashPassword(body.new_password);
    const now = ctx.clock.now();
    const set = await ctx.sql.begin(async (tx) => {
      if (!(await store.setFirstPasswordHash(tx, auth.userId, hash, now))) return false;
      await store.expireEmailTokens(tx, auth.userId, 'password_reset', now);
      return true;
    });
    if (!set) throw new ApiError(422, 'password-already-set', 'This account has a password already; change it instead.');
    return { status: 200, body: ACCEPTED };
  },
};
