// Personal API tokens (document 1, "Personal API tokens and delegations"; DECISIONS.md §3): minting,
// listing and revoking the caller's own, and the capabilities the caller may grant. Only a full session
// mints or revokes (the spec's x-callers, enforced in http/bind.ts).
import { randomUUID } from 'node:crypto';
import { formatPersonalApiToken, keyedDigest, newSecret } from '../../auth/crypto/tokens.js';
import { grantableBy } from '../../authz/capabilities.js';
import { elevationRequired, invalidFieldValue, notFound } from '../../http/errors.js';
import type { AreaHandlers } from '../../http/handler.js';
import { checkGrants } from './grants.js';
import { credentialName } from './name.js';
import { toApiToken, toCapability } from './mappers.js';
import * as store from './store.js';

export const apiTokenHandlers: AreaHandlers<
  'meApiTokenList' | 'meApiTokenCreate' | 'meApiTokenRevoke' | 'meApiTokenCapabilitiesList'
> = {
  async meApiTokenList({ auth, ctx }) {
    const rows = await store.listTokens(ctx.sql, auth.userId);
    return { status: 200, body: rows.map(toApiToken) };
  },

  async meApiTokenCreate({ body, auth, ctx }) {
    const now = ctx.clock.now();
    const name = credentialName(body.name, "A token's");
    const expiresAt = body.expires_at == null ? null : new Date(body.expires_at);
    if (expiresAt && expiresAt <= now) {
      throw invalidFieldValue('expires_at must be in the future, or null for a token that does not expire.', [
        { location: 'body', pointer: '/expires_at', message: 'not in the future' },
      ]);
    }
    const systemPermissions = await store.systemPermissionsOf(ctx.sql, auth.userId);
    const { grants, adminOnly } = await checkGrants(ctx.sql, auth.userId, systemPermissions, body.authorization.grants);
    const adminAuthorized = body.admin_authorized ?? false;
    if (adminOnly.length > 0) {
      const elevated = auth.elevatedUntil !== null && auth.elevatedUntil > now;
      if (!adminAuthorized || !elevated) {
        throw elevationRequired(
          `Granting ${adminOnly.map((c) => c.name).join(', ')} needs admin_authorized: true and an elevated session.`,
        );
      }
    } else if (adminAuthorized) {
      throw invalidFieldValue('admin_authorized is true only when an admin-only capability is granted.', [
        { location: 'body', pointer: '/admin_authorized', message: 'no admin-only capability granted' },
      ]);
    }
    const id = randomUUID();
    const secret = formatPersonalApiToken(id, newSecret());
    const digest = keyedDigest(await ctx.pepper('apiTokenDigest'), secret);
    const row = await store.insertToken(
      ctx.sql,
      { id, userId: auth.userId, name, digest, grants, adminAuthorized, expiresAt },
      now,
    );
    return { status: 201, body: { secret, token: toApiToken(row) } };
  },

  async meApiTokenRevoke({ path, auth, ctx }) {
    // Another account's token, an unknown id and a revoked token: the same 404 (anti-enumeration).
    if (!(await store.revokeToken(ctx.sql, auth.userId, path.token_id.toLowerCase(), ctx.clock.now()))) {
      throw notFound('No such API token.');
    }
    return { status: 204 };
  },

  async meApiTokenCapabilitiesList({ auth, ctx }) {
    // A token or an application acting as the user never sees (so never hands on) staff power.
    const catalogue =
      auth.kind === 'session' ? grantableBy(await store.systemPermissionsOf(ctx.sql, auth.userId)) : grantableBy([]);
    return { status: 200, body: catalogue.map(toCapability) };
  },
};
