// Elevation by PIN and TOTP, the status, leaving and removing methods (seed document 1, "Elevation").
// Passkeys are in webauthn.ts; what all methods share is in elevation.ts.
import { signAccessToken } from '../../auth/crypto/access-tokens.js';
import { hashPassword, verifyPassword } from '../../auth/crypto/passwords.js';
import { elevationRequired, invalidFieldValue } from '../../http/errors.js';
import { unauthenticated } from '../../http/authenticate.js';
import type { AreaHandlers } from '../../http/handler.js';
import { ACCESS_TOKEN_TTL_SECONDS } from '../auth/limits.js';
import { endElevation, findUserById } from '../auth/store.js';
import {
  elevatedToken,
  elevationAttempt,
  enrolledMethods,
  isElevated,
  requireAvailable,
  requireSetupAllowed,
} from './elevation.js';
import * as store from './store.js';
import { matchTotp, newTotpSecret, PENDING_TOTP_SECONDS, totpUri } from './totp.js';

// One sentence for every PIN refusal, so a wrong PIN, no PIN and a locked PIN read alike.
const wrongPin = () =>
  invalidFieldValue('The PIN is not correct.', [{ location: 'body', pointer: '/pin', message: 'incorrect' }]);
// Likewise for TOTP: a wrong code, a used code and an account without TOTP.
const wrongCode = () =>
  invalidFieldValue('The code is not correct or was already used.', [
    { location: 'body', pointer: '/code', message: 'incorrect' },
  ]);

export const sudoHandlers: AreaHandlers<
  | 'sudoStatusGet'
  | 'sudoSetup'
  | 'sudoElevate'
  | 'sudoDisable'
  | 'sudoExit'
  | 'sudoTotpEnrollOptions'
  | 'sudoTotpEnroll'
  | 'sudoTotpVerify'
> = {
  async sudoStatusGet({ auth, ctx }) {
    return {
      status: 200,
      body: {
        is_elevated: isElevated(auth),
        elevated_until: auth.elevatedUntil?.toISOString() ?? null,
        available_methods: [...ctx.config.elevationMethods],
        enrolled_methods: await enrolledMethods(ctx, auth.userId),
      },
    };
  },

  async sudoSetup({ body, auth, ctx }) {
    await requireSetupAllowed(ctx, auth, 'pin');
    return {
      status: 200,
      body: await elevationAttempt(ctx, auth.userId, async () => {
        await store.setPin(ctx.sql, auth.userId, await hashPassword(body.pin), ctx.clock.now());
        return elevatedToken(ctx, auth);
      }),
    };
  },

  async sudoElevate({ body, auth, ctx }) {
    requireAvailable(ctx, 'pin');
    return {
      status: 200,
      body: await elevationAttempt(ctx, auth.userId, async () => {
        const factors = await store.findFactors(ctx.sql, auth.userId);
        // A missing or locked PIN still costs one argon2 verification, so timing tells nothing either.
        const usable = factors?.pin_hash && !factors.pin_locked_at ? factors.pin_hash : null;
        const { ok } = await verifyPassword(usable, body.pin);
        if (!ok) throw wrongPin();
        return elevatedToken(ctx, auth);
      }),
    };
  },

  async sudoDisable({ body, auth, ctx }) {
    if (!isElevated(auth)) throw elevationRequired('Removing an elevation method needs an elevated session.');
    const now = ctx.clock.now();
    if (body.method === 'webauthn') await store.deletePasskeys(ctx.sql, auth.userId);
    else await store.clearFactor(ctx.sql, auth.userId, body.method, now);
    return { status: 204 };
  },

  async sudoExit({ auth, ctx }) {
    // On the server, not only in the answer: every elevated token of this session stops being
    // elevated, and a refresh sent with one carries nothing forward (DECISIONS.md §7).
    await endElevation(ctx.sql, auth.sessionId);
    const { token } = await signAccessToken(
      ctx.keys,
      { sub: auth.userId, sid: auth.sessionId, ttlSeconds: ACCESS_TOKEN_TTL_SECONDS },
      ctx.clock.now(),
    );
    return { status: 200, body: { token } };
  },

  async sudoTotpEnrollOptions({ auth, ctx }) {
    await requireSetupAllowed(ctx, auth, 'totp');
    const user = await findUserById(ctx.sql, auth.userId);
    if (!user) throw unauthenticated();
    const secret = newTotpSecret();
    const now = ctx.clock.now();
    await store.putPendingTotp(
      ctx.sql,
      auth.userId,
      await ctx.box.seal('totp', secret),
      new Date(now.getTime() + PENDING_TOTP_SECONDS * 1000),
    );
    const account = user.email ?? user.name;
    const issuer = ctx.config.platformName;
    return { status: 200, body: { account, issuer, otpauth_url: totpUri(issuer, account, secret), secret } };
  },

  async sudoTotpEnroll({ body, auth, ctx }) {
    await requireSetupAllowed(ctx, auth, 'totp');
    return {
      status: 200,
      body: await elevationAttempt(ctx, auth.userId, async () => {
        const now = ctx.clock.now();
        const sealed = await store.findPendingTotp(ctx.sql, auth.userId, now);
        if (!sealed) {
          throw invalidFieldValue('No TOTP enrollment is pending, or it expired after 5 minutes: start again.', [
            { location: 'body', pointer: '/code', message: 'no pending enrollment' },
          ]);
        }
        const step = await matchTotp(await ctx.box.openText('totp', sealed), body.code, now);
        if (step === null) {
          throw invalidFieldValue("The code does not match the new secret: check the authenticator app's clock.", [
            { location: 'body', pointer: '/code', message: 'incorrect' },
          ]);
        }
        await ctx.sql.begin(async (tx) => {
          await store.setTotpSecret(tx, auth.userId, sealed, now);
          // The enrolling code is spent like any other.
          await store.claimTotpStep(tx, auth.userId, step, now);
          await store.deletePendingTotp(tx, auth.userId);
        });
        return elevatedToken(ctx, auth);
      }),
    };
  },

  async sudoTotpVerify({ body, auth, ctx }) {
    requireAvailable(ctx, 'totp');
    return {
      status: 200,
      body: await elevationAttempt(ctx, auth.userId, async () => {
        const now = ctx.clock.now();
        const factors = await store.findFactors(ctx.sql, auth.userId);
        if (!factors?.totp_secret_sealed) throw wrongCode();
        const step = await matchTotp(await ctx.box.openText('totp', factors.totp_secret_sealed), body.code, now);
        // Accepted once only, everywhere: the step must move the stored last step forward.
        if (step === null || !(await store.claimTotpStep(ctx.sql, auth.userId, step, now))) throw wrongCode();
        return elevatedToken(ctx, auth);
      }),
    };
  },
};
