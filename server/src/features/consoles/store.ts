// All SQL of minting gateway tickets (migration 0020). Redemption is the gateway's (gateway/store.ts).
import type { Db } from '../../db/client.js';
import type { TicketPurpose } from '../../gateway/tickets.js';

export interface TicketRow {
  id: string;
  purpose: TicketPurpose;
  service_instance_id: string;
  resource_id: string;
  user_id: string;
  session_id: string | null;
  token_id: string | null;
  delegation_id: string | null;
  details: Record<string, unknown>;
  created_at: Date;
  expires_at: Date;
}

export async function insertTicket(db: Db, row: TicketRow): Promise<void> {
  await db`
    insert into gateway_tickets ${db(
      { ...row, details: db.json(row.details as never) } as never,
      'id',
      'purpose',
      'service_instance_id',
      'resource_id',
      'user_id',
      'session_id',
      'token_id',
      'delegation_id',
      'details',
      'created_at',
      'expires_at',
    )}`;
}

/** The features of the service's product (catalog `features`). */
export async function productFeatures(db: Db, productId: string): Promise<string[]> {
  const [row] = await db<
    { features: string[] }[]
  >`select features from catalog_products where id = ${productId}`;
  return row?.features ?? [];
}
