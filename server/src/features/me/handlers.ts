// The caller's identity, onboarding and discovery ledger (seed document 1, "Identity").
import { invalidFieldValue, notFound, rateLimited, unprocessable } from '../../http/errors.js';
import type { AreaHandlers } from '../../http/handler.js';
import { unauthenticated } from '../../http/authenticate.js';
import { hit } from '../../ratelimit/limiter.js';
import { requireCountryCode } from './countries.js';
import { DISCOVERY_KEYS_PER_CALL, isDiscoveryKey } from './discovery.js';
import { toMe } from './mappers.js';
import { checkName } from './name-rules.js';
import * as store from './store.js';

// Seed "Limits": about 30 discovery calls a minute per caller; fixed by the seed, so never scaled.
const DISCOVERY_PER_USER = { name: 'discovery:user', max: 30, windowSeconds: 60 };

export const meHandlers: AreaHandlers<
  'meGet' | 'meUpdate' | 'meOnboardingComplete' | 'meDiscoveryGet' | 'meDiscoveryMark'
> = {
  async meGet({ auth, ctx }) {
    const me = await store.findMe(ctx.sql, auth.userId);
    // A session outliving its account (deleted meanwhile) is no longer a caller.
    if (!me) throw unauthenticated();
    return { status: 200, body: toMe(me, auth) };
  },

  async meUpdate({ body, auth, ctx }) {
    const changes: store.ProfileChanges = {};
    if (body.name != null) {
      const checked = checkName(body.name);
      if (!checked.ok) {
        throw invalidFieldValue(checked.message, [{ location: 'body', pointer: '/name', message: checked.reason }]);
      }
      changes.name = checked.name;
    }
    if (body.language != null) changes.language = body.language;
    if (body.chat_notifications_enabled != null) changes.chat_notifications_enabled = body.chat_notifications_enabled;
    const country =
      body.billing_country_code == null ? null : requireCountryCode(body.billing_country_code, '/billing_country_code');
    const me = await ctx.sql.begin(async (tx) => {
      const current = await store.lockMe(tx, auth.userId);
      if (!current) throw notFound('The account no longer exists.');
      if (country !== null && country !== current.billing_country_code) {
        if (current.is_onboarded && current.billing_country_code !== null) {
          throw unprocessable(
            'billing-country-already-set',
            'The billing country cannot change once onboarding is complete; contact support to change it.',
          );
        }
        changes.billing_country_code = country;
      }
      return store.updateProfile(tx, auth.userId, changes, ctx.clock.now());
    });
    return { status: 200, body: toMe(me, auth) };
  },

  async meOnboardingComplete({ auth, ctx }) {
    const me = await store.completeOnboarding(ctx.sql, auth.userId, ctx.clock.now());
    if (!me) throw unprocessable('onboarding-already-completed', 'Onboarding is already complete.');
    return { status: 200, body: toMe(me, auth) };
  },

  async meDiscoveryGet({ auth, ctx }) {
    const rows = await store.listDiscovery(ctx.sql, auth.userId);
    return { status: 200, body: { seen: Object.fromEntries(rows.map((r) => [r.key, r.first_seen_at.toISOString()])) } };
  },

  async meDiscoveryMark({ body, auth, ctx }) {
    const now = ctx.clock.now();
    const { allowed, retryAfterSeconds } = await hit(ctx.sql, DISCOVERY_PER_USER, auth.userId, now);
    if (!allowed) throw rateLimited(retryAfterSeconds);
    if (body.keys.length > DISCOVERY_KEYS_PER_CALL) {
      throw invalidFieldValue(`At most ${DISCOVERY_KEYS_PER_CALL} keys per call.`, [
        { location: 'body', pointer: '/keys', message: `more than ${DISCOVERY_KEYS_PER_CALL} keys` },
      ]);
    }
    const bad = body.keys.findIndex((k) => !isDiscoveryKey(k));
    if (bad >= 0) {
      throw invalidFieldValue(
        `Discovery key ${JSON.stringify(body.keys[bad])} is not of the form <nav|tab|product|ui>:<path> ([a-z0-9/_-], at most 96 characters); nothing was recorded.`,
        [{ location: 'body', pointer: `/keys/${bad}`, message: 'not a discovery key' }],
      );
    }
    await store.markDiscovery(ctx.sql, auth.userId, [...new Set(body.keys)], now);
    return { status: 204 };
  },
};
