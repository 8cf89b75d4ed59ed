// All SQL of the gateway: redeeming tickets, re-reading whether the sockets' callers may still be
// there, and the gateway's own heartbeat row (migration 0020).
import type { Db } from '../db/client.js';
import { can, ROLES } from '../authz/roles.js';
import type { TicketPurpose } from './tickets.js';

/** Roles that may change a service: who may hold a console, shell or screen (DECISIONS.md §6 "Access"). */
const MANAGING_ROLES = ROLES.filter((role) => can(role, 'services.manage'));

export interface RedeemedTicket {
  id: string;
  purpose: TicketPurpose;
  service_instance_id: string;
  resource_id: string;
  user_id: string;
  details: Record<string, unknown>;
}

/**
 * The caller of ticket `t` may still use it at `now`: a managing member of the service's organization,
 * the service not suspended or ended and its subscription active, the resource live, and the credential that asked for it
 * (session, API token or delegation) not revoked or expired.
 */
function stillAllowed(db: Db, now: Date) {
  return db`
    exists (
      select 1 from service_instances s
      join subscriptions sub on sub.id = s.subscription_id
      join projects p on p.id = s.project_id
      join organization_members m on m.organization_id = p.organization_id and m.user_id = t.user_id
      join users u on u.id = t.user_id and u.deleted_at is null
      join service_resources r on r.id = t.resource_id and r.deleted_at is null
      where s.id = t.service_instance_id and s.status in ('running', 'stopped') and sub.status = 'active'
        and m.role = any(${MANAGING_ROLES}::text[]))
    and (t.session_id is null or exists (
      select 1 from sessions se where se.id = t.session_id and se.revoked_at is null
        and se.absolute_expires_at > ${now} and se.idle_expires_at > ${now}))
    and (t.token_id is null or exists (
      select 1 from api_tokens k where k.id = t.token_id and k.revoked_at is null
        and (k.expires_at is null or k.expires_at > ${now})))
    and (t.delegation_id is null or exists (
      select 1 from application_delegations d where d.id = t.delegation_id and d.revoked_at is null))`;
}

/**
 * Spends the ticket: one conditional update, so of two gateways (or two sockets) redeeming it at once
 * exactly one gets the row. Unknown, spent, expired, of another purpose or resource, or of a caller
 * whose access ended: undefined.
 */
export async function redeemTicket(
  db: Db,
  claim: { id: string; purpose: TicketPurpose; resourceId: string },
  gatewayId: string,
  now: Date,
): Promise<RedeemedTicket | undefined> {
  const [row] = await db<RedeemedTicket[]>`
    update gateway_tickets t set redeemed_at = ${now}, redeemed_by = ${gatewayId}
    where t.id = ${claim.id} and t.purpose = ${claim.purpose} and t.resource_id = ${claim.resourceId}
      and t.redeemed_at is null and t.expires_at > ${now}
      and ${stillAllowed(db, now)}
    returning t.id, t.purpose, t.service_instance_id, t.resource_id, t.user_id, t.details`;
  return row;
}

/**
 * A file session's ticket used for one request: unexpired, of this purpose and resource, its caller's
 * access intact. Unlike the others it is not spent (a session is used for its whole 15 minutes); the
 * first use is recorded.
 */
export async function useFileSession(
  db: Db,
  claim: { id: string; resourceId: string },
  gatewayId: string,
  now: Date,
): Promise<RedeemedTicket | undefined> {
  const [row] = await db<RedeemedTicket[]>`
    update gateway_tickets t set redeemed_at = coalesce(t.redeemed_at, ${now}),
      redeemed_by = coalesce(t.redeemed_by, ${gatewayId})
    where t.id = ${claim.id} and t.purpose = 'file_session' and t.resource_id = ${claim.resourceId}
      and t.expires_at > ${now}
      and ${stillAllowed(db, now)}
    returning t.id, t.purpose, t.service_instance_id, t.resource_id, t.user_id, t.details`;
  return row;
}

/**
 * Of these redeemed tickets, the ones whose caller may still hold the socket, each with whether its
 * service runs (a shell is the gateway's process, so a stopped unit does not end it by itself).
 */
export async function ticketsStillAllowed(db: Db, ids: string[], now: Date): Promise<Map<string, boolean>> {
  if (ids.length === 0) return new Map();
  const rows = await db<{ id: string; running: boolean }[]>`
    select t.id, exists (select 1 from service_instances s where s.id = t.service_instance_id and s.status = 'running') as running
    from gateway_tickets t where t.id = any(${ids}::uuid[]) and ${stillAllowed(db, now)}`;
  return new Map(rows.map((r) => [r.id, r.running]));
}

/**
 * Of these screen tickets, those whose session holds their machine's screen at `now` (the hold's session
 * digest is the one the ticket was minted with, unexpired): their sockets' input goes through.
 */
export async function screenTicketsHolding(db: Db, ids: string[], now: Date): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db<{ id: string }[]>`
    select t.id from gateway_tickets t
    join screen_holds h on h.resource_id = t.resource_id and h.session_digest = t.details->>'session_digest'
    where t.id = any(${ids}::uuid[]) and t.purpose = 'screen' and h.expires_at > ${now}`;
  return new Set(rows.map((r) => r.id));
}

export async function registerGateway(
  db: Db,
  row: { id: string; url: string; pid: number; now: Date },
): Promise<void> {
  // Rows of gateways that died without a word, an hour on.
  await db`delete from gateway_instances where heartbeat_at < ${new Date(row.now.getTime() - 3600_000)}`;
  await db`
    insert into gateway_instances (id, url, pid, started_at, heartbeat_at)
    values (${row.id}, ${row.url}, ${row.pid}, ${row.now}, ${row.now})
    on conflict (id) do update set heartbeat_at = excluded.heartbeat_at`;
}

export async function heartbeat(db: Db, id: string, url: string, now: Date): Promise<void> {
  await db`
    insert into gateway_instances (id, url, pid, started_at, heartbeat_at)
    values (${id}, ${url}, ${process.pid}, ${now}, ${now})
    on conflict (id) do update set heartbeat_at = excluded.heartbeat_at`;
}

export async function unregisterGateway(db: Db, id: string): Promise<void> {
  await db`delete from gateway_instances where id = ${id}`;
}

/** Gateways whose heartbeat is newer than `since` (the API's /readyz). */
export async function liveGateways(db: Db, since: Date): Promise<number> {
  const [row] = await db<
    { n: number }[]
  >`select count(*)::int as n from gateway_instances where heartbeat_at >= ${since}`;
  return row?.n ?? 0;
}

/** Every live volume: where killed uploads may have left their temporary files. */
export async function liveVolumeIds(db: Db): Promise<string[]> {
  const rows = await db<{ id: string }[]>`
    select id from service_resources where kind = 'volume' and deleted_at is null order by id`;
  return rows.map((r) => r.id);
}
