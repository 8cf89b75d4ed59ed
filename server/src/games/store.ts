// The games' rows: the RCON password of a game service (sealed), and what the game routes read of a
// service (its product's kind and program, its primary allocation and unit).
import type { Db } from '../db/client.js';

/**
 * The sealed password, inserted as `candidate` unless one exists: either way the one that stays. A
 * racing insert that lost waited for the winner's commit, which its statement's snapshot predates, so
 * it reads again in a new statement.
 */
export async function ensureRconPassword(
  db: Db,
  serviceId: string,
  candidate: string,
  now: Date,
): Promise<string> {
  for (;;) {
    const [row] = await db<{ password_sealed: string }[]>`
    with made as (
      insert into game_rcon_credentials (service_instance_id, password_sealed, created_at)
      values (${serviceId}, ${candidate}, ${now})
      on conflict (service_instance_id) do nothing
      returning password_sealed
    )
    select password_sealed from made
    union all
    select password_sealed from game_rcon_credentials where service_instance_id = ${serviceId}
    limit 1`;
    if (row) return row.password_sealed;
  }
}

/** The sealed password, or null when the service's workload was never given one (it runs no RCON). */
export async function sealedRconPassword(db: Db, serviceId: string): Promise<string | null> {
  const [row] = await db<{ password_sealed: string }[]>`
    select password_sealed from game_rcon_credentials where service_instance_id = ${serviceId}`;
  return row?.password_sealed ?? null;
}

export interface GameServiceRow {
  name: string;
  product_kind: string;
  workload_program: string | null;
}

export async function gameService(db: Db, serviceId: string): Promise<GameServiceRow | null> {
  const [row] = await db<GameServiceRow[]>`
    select s.name, cp.kind as product_kind, cp.workload_program
    from service_instances s join catalog_products cp on cp.id = s.product_id
    where s.id = ${serviceId}`;
  return row ?? null;
}

export interface PrimaryTarget {
  external_ip: string;
  external_port: number;
  protocol: string;
  unit_status: string | null;
}

/** The service's primary allocation (where players reach the game), or null without one. */
export async function primaryTarget(db: Db, serviceId: string): Promise<PrimaryTarget | null> {
  const [row] = await db<PrimaryTarget[]>`
    select host(a.external_ip) as external_ip, a.external_port, a.protocol, r.status as unit_status
    from port_allocations a left join service_resources r on r.id = a.resource_id
    where a.service_instance_id = ${serviceId} and a.is_primary
    limit 1`;
  return row ?? null;
}

export interface RconUnit {
  unit_id: string;
  /** The unit's own address, where its RCON listens; null before the substrate gave it one. */
  address: string | null;
  unit_status: string;
  volume_id: string | null;
}

/** The service's workload unit (where RCON listens) and its volume (where ops.json is). */
export async function rconUnit(db: Db, serviceId: string): Promise<RconUnit | null> {
  const [row] = await db<RconUnit[]>`
    select r.id as unit_id, host(r.address) as address, r.status as unit_status, r.volume_id
    from service_resources r
    where r.service_instance_id = ${serviceId} and r.kind = 'workload' and r.deleted_at is null
    order by (r.role = 'primary') desc, r.created_at
    limit 1`;
  return row ?? null;
}
