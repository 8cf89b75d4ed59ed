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

// Screen holds (migration 0024). Each decision is one statement on the machine's row, so two API
// processes asking at once cannot both win it.

/**
 * Takes the machine's screen hold for `sessionDigest`: when nobody holds it, its hold lapsed, or
 * `force`. Answers whether it was taken (false: another caller's hold runs, nothing written).
 */
export async function takeScreenHold(
  db: Db,
  hold: { resourceId: string; sessionDigest: string; userId: string; now: Date; expiresAt: Date; force: boolean },
): Promise<boolean> {
  const rows = await db`
    insert into screen_holds (resource_id, session_digest, user_id, taken_at, expires_at)
    values (${hold.resourceId}, ${hold.sessionDigest}, ${hold.userId}, ${hold.now}, ${hold.expiresAt})
    on conflict (resource_id) do update set
      session_digest = excluded.session_digest, user_id = excluded.user_id,
      taken_at = excluded.taken_at, expires_at = excluded.expires_at
    where ${hold.force} or screen_holds.expires_at <= ${hold.now}
    returning resource_id`;
  return rows.length === 1;
}

/**
 * Extends the hold of this session of this user, lapsed or not (a lapsed hold nobody else claimed keeps
 * its session's row). Answers the new expiry, or null when the row is somebody else's.
 */
export async function refreshScreenHold(
  db: Db,
  hold: { resourceId: string; sessionDigest: string; userId: string; expiresAt: Date },
): Promise<Date | null> {
  const [row] = await db<{ expires_at: Date }[]>`
    update screen_holds set expires_at = ${hold.expiresAt}
    where resource_id = ${hold.resourceId} and session_digest = ${hold.sessionDigest}
      and user_id = ${hold.userId}
    returning expires_at`;
  return row?.expires_at ?? null;
}

/** Lapses the hold now when this session of this user holds it; answers whether it did. */
export async function releaseScreenHold(
  db: Db,
  hold: { resourceId: string; sessionDigest: string; userId: string; now: Date },
): Promise<boolean> {
  const rows = await db`
    update screen_holds set expires_at = ${hold.now}
    where resource_id = ${hold.resourceId} and session_digest = ${hold.sessionDigest}
      and user_id = ${hold.userId} and expires_at > ${hold.now}
    returning resource_id`;
  return rows.length === 1;
}

/**
 * The name of whoever holds the machine's screen: unexpired at `now`, or (`lapsed`) whoever last took it,
 * unless that is the session `except` of its own user.
 */
export async function screenHolderName(
  db: Db,
  resourceId: string,
  options: { now: Date; except?: { sessionDigest: string; userId: string }; lapsed?: boolean },
): Promise<string | null> {
  const [row] = await db<{ name: string }[]>`
    select u.name from screen_holds h join users u on u.id = h.user_id
    where h.resource_id = ${resourceId}
      and not (h.session_digest = ${options.except?.sessionDigest ?? ''}
        and h.user_id = ${options.except?.userId ?? '00000000-0000-0000-0000-000000000000'})
      and (${options.lapsed ?? false} or h.expires_at > ${options.now})`;
  return row?.name ?? null;
}
