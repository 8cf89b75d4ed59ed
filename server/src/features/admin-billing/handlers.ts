// Staff: an organization's wallet (DECISIONS.md §4, `PUT /admin/organizations/{id}/wallet`,
// `manage_billing`). The wallet is what the organization standing is computed from (seed document 1,
// "Organization standing"; organizations/standing.ts), so GET /organizations/{organization_id}/standing
// follows the write at once.
import { actorOf, recordPlatformEvent } from '../../audit/record.js';
import { requireSystemPermission } from '../../authz/staff.js';
import { notFound } from '../../http/errors.js';
import type { AreaHandlers } from '../../http/handler.js';
import { formatCents, standingOf, toCents } from '../organizations/standing.js';
import type { WalletRow } from '../organizations/store.js';
import * as store from './store.js';

/** "100" and "100.5" as the wallet stores them: "100.00", "100.50" (the spec's pattern holds already). */
const canonical = (amount: string): string => formatCents(toCents(amount));

export const adminBillingHandlers: AreaHandlers<'adminOrganizationWalletSet'> = {
  async adminOrganizationWalletSet({ path, body, auth, ctx }) {
    await requireSystemPermission(ctx.sql, auth.userId, 'manage_billing');
    const wallet: WalletRow = {
      balance: canonical(body.balance),
      reservations: canonical(body.reservations),
      floor: canonical(body.floor),
      credit_limit: canonical(body.credit_limit),
      open_receivables: canonical(body.open_receivables),
    };
    const id = path.id.toLowerCase();
    const row = await ctx.sql.begin(async (tx) => {
      if (!(await store.lockOrganization(tx, id))) throw notFound('No such organization.');
      const before = await store.lockWallet(tx, id);
      const saved = await store.upsertWallet(tx, id, wallet, ctx.clock.now());
      const actor = actorOf(auth);
      await recordPlatformEvent(tx, ctx, {
        organizationId: id,
        action: 'wallet.set',
        target: { type: 'organization', id },
        details: {
          before,
          after: wallet,
          currency: 'EUR',
          actor_user_id: actor.userId,
          actor_token_id: actor.tokenId ?? null,
        },
      });
      return saved;
    });
    return {
      status: 200,
      body: {
        organization_id: id,
        currency: 'EUR',
        balance: row.balance,
        reservations: row.reservations,
        floor: row.floor,
        credit_limit: row.credit_limit,
        open_receivables: row.open_receivables,
        restricted: standingOf(row, false).restricted,
        updated_at: row.updated_at.toISOString(),
      },
    };
  },
};
