// All SQL of the staff route for organization wallets (DECISIONS.md §4, `manage_billing`). Money is
// passed and read as PostgreSQL numeric text, never through a JS float.
import type { Db } from '../../db/client.js';
import type { WalletRow } from '../organizations/store.js';

export interface AdminWalletRow extends WalletRow {
  updated_at: Date;
}

/** Whether the organization exists; its row is share-locked so it cannot be deleted under the write. */
export async function lockOrganization(db: Db, id: string): Promise<boolean> {
  const [row] = await db`select 1 from organizations where id = ${id} for key share`;
  return row !== undefined;
}

/** The wallet as it was (null: never set up), locked until the transaction ends. */
export async function lockWallet(db: Db, organizationId: string): Promise<WalletRow | null> {
  const [row] = await db<WalletRow[]>`
    select balance::text, reservations::text, floor::text, credit_limit::text, open_receivables::text
    from organization_wallets where organization_id = ${organizationId} for update`;
  return row ?? null;
}

export async function upsertWallet(
  db: Db,
  organizationId: string,
  w: WalletRow,
  now: Date,
): Promise<AdminWalletRow> {
  const [row] = await db<AdminWalletRow[]>`
    insert into organization_wallets (organization_id, balance, reservations, floor, credit_limit, open_receivables, updated_at)
    values (${organizationId}, ${w.balance}::numeric, ${w.reservations}::numeric, ${w.floor}::numeric,
            ${w.credit_limit}::numeric, ${w.open_receivables}::numeric, ${now})
    on conflict (organization_id) do update set balance = excluded.balance, reservations = excluded.reservations,
      floor = excluded.floor, credit_limit = excluded.credit_limit, open_receivables = excluded.open_receivables,
      updated_at = excluded.updated_at
    returning balance::text, reservations::text, floor::text, credit_limit::text, open_receivables::text, updated_at`;
  return row!;
}
