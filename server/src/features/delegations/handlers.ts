// Application delegations (document 1, "Application delegation", "Personal API tokens and
// delegations"; DECISIONS.md §4 "Delegations"): what a user lets a registered application do as them.
// A user grants and revokes with a full session; an application obtains one by presenting an access
// token of the user's live session, which the service verifies itself.
import { randomUUID } from 'node:crypto';
import { AccessTokenError, verifyAccessToken } from '../../auth/crypto/access-tokens.js';
import { findCapability } from '../../authz/capabilities.js';
import { ApiError, invalidFieldValue, notFound } from '../../http/errors.js';
import type { AreaHandlers } from '../../http/handler.js';
import { findLiveSession } from '../auth/store.js';
import * as store from './store.js';

/** Catalogue capabilities only, and never staff power: acting-as is never elevated. */
function checkCapabilities(names: readonly string[]): string[] {
  names.forEach((name, i) => {
    const capability = findCapability(name);
    const message = !capability
      ? `Unknown capability "${name}".`
      : capability.systemPermission !== null
        ? `${name} is admin-only and is never delegated.`
        : null;
    if (message) throw invalidFieldValue(message, [{ location: 'body', pointer: `/capabilities/${i}`, message }]);
  });
  return [...new Set(names)].sort();
}

const invalidSessionToken = () =>
  new ApiError(401, 'invalid-credentials', 'session_token is not an access token of a live session.');

export const delegationHandlers: AreaHandlers<
  'meDelegationList' | 'meDelegationGrant' | 'meDelegationRevoke' | 'applicationDelegationMint'
> = {
  async meDelegationList({ auth, ctx }) {
    const rows = await store.listDelegations(ctx.sql, auth.userId);
    return {
      status: 200,
      body: rows.map((r) => ({
        id: r.id,
        application: { id: r.application_id, name: r.application_name },
        capabilities: r.capabilities,
        status: r.revoked_at ? ('revoked' as const) : ('live' as const),
        created_at: r.created_at.toISOString(),
        updated_at: r.updated_at.toISOString(),
        last_used_at: r.last_used_at?.toISOString() ?? null,
        revoked_at: r.revoked_at?.toISOString() ?? null,
      })),
    };
  },

  async meDelegationGrant({ body, auth, ctx }) {
    const capabilities = checkCapabilities(body.capabilities);
    const row = await store.upsertDelegation(
      ctx.sql,
      { id: randomUUID(), applicationId: body.application_id.toLowerCase(), userId: auth.userId, capabilities },
      ctx.clock.now(),
    );
    if (!row) throw notFound('No such application.');
    return { status: 204 };
  },

  async meDelegationRevoke({ path, auth, ctx }) {
    if (!(await store.revokeDelegation(ctx.sql, auth.userId, path.delegation_id.toLowerCase(), ctx.clock.now()))) {
      throw notFound('No such delegation.');
    }
    return { status: 204 };
  },

  async applicationDelegationMint({ body, auth, ctx }) {
    const capabilities = checkCapabilities(body.capabilities);
    const now = ctx.clock.now();
    let userId: string;
    try {
      const claims = await verifyAccessToken(ctx.keys, body.session_token, now);
      const session = await findLiveSession(ctx.sql, claims.sid, now);
      if (!session || session.user_id !== claims.sub) throw invalidSessionToken();
      userId = claims.sub;
    } catch (err) {
      if (err instanceof AccessTokenError) throw invalidSessionToken();
      throw err;
    }
    const row = await store.upsertDelegation(
      ctx.sql,
      { id: randomUUID(), applicationId: auth.applicationId, userId, capabilities },
      now,
    );
    // The application authenticated a moment ago; gone now only if deleted meanwhile.
    if (!row) throw notFound('No such application.');
    return { status: 200, body: { id: row.id, user_id: userId } };
  },
};
