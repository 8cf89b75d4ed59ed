// All SQL of external access: port allocations, slots, and the edges' reports (document 2 §2, §4
// "External access"; migration 0021).
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';

export interface AllocationRow {
  id: string;
  service_instance_id: string;
  resource_id: string;
  external_ip: string;
  external_port: number;
  internal_port: number;
  protocol: 'tcp' | 'udp';
  is_primary: boolean;
  is_system: boolean;
  network_protection_mode: string;
  allocated_at: Date;
}

const COLUMNS = `a.id, a.service_instance_id, a.resource_id, host(a.external_ip) as external_ip, a.external_port,
  a.internal_port, a.protocol, a.is_primary, a.is_system, a.network_protection_mode, a.allocated_at`;

/** The primary first, then oldest first. */
export async function listAllocations(db: Db, serviceId: string): Promise<AllocationRow[]> {
  return db<AllocationRow[]>`
    select ${db.unsafe(COLUMNS)} from port_allocations a
    where a.service_instance_id = ${serviceId}
    order by a.is_primary desc, a.allocated_at, a.external_port`;
}

export async function findAllocation(
  db: Db,
  serviceId: string,
  allocationId: string,
): Promise<AllocationRow | undefined> {
  const [row] = await db<AllocationRow[]>`
    select ${db.unsafe(COLUMNS)} from port_allocations a
    where a.id = ${allocationId} and a.service_instance_id = ${serviceId}`;
  return row;
}

/** Slots: the customer's own allocations (neither primary nor system) against 3 + extra_slots. */
export async function slotUsage(db: Db, serviceId: string): Promise<{ used: number; extra_slots: number }> {
  const [row] = await db<{ used: number; extra_slots: number }[]>`
    select (select count(*)::int from port_allocations a
            where a.service_instance_id = s.id and not a.is_primary and not a.is_system) as used,
           s.extra_slots
    from service_instances s where s.id = ${serviceId}`;
  return row ?? { used: 0, extra_slots: 0 };
}

export async function hasAllocationFor(
  db: Db,
  serviceId: string,
  internalPort: number,
  protocol: string,
): Promise<boolean> {
  const rows = await db`
    select 1 from port_allocations
    where service_instance_id = ${serviceId} and internal_port = ${internalPort} and protocol = ${protocol}`;
  return rows.length > 0;
}

export interface NewAllocation {
  serviceId: string;
  resourceId: string;
  externalIp: string;
  pool: { from: number; to: number };
  protocol: 'tcp' | 'udp';
  /** null: the same number as the public port (match_port). */
  internalPort: number | null;
  isPrimary: boolean;
  isSystem: boolean;
}

/**
 * Takes a free public port of the pool at random and records the allocation; undefined when the pool
 * has none left. No transaction waits for another's commit: a port is claimed with a try-lock of its
 * own before it is inserted, so a port another transaction is taking (its row not committed yet, which
 * the insert would wait for) is passed over and another drawn. After a few such draws (a pool nearly
 * full) it takes the address's advisory lock, held to the end of the caller's transaction, and waits
 * for a drawn port's lock, so a pool with any port left is searched to the end.
 */
export async function insertAllocation(
  db: Db,
  input: NewAllocation,
  now: Date,
): Promise<AllocationRow | undefined> {
  for (let draw = 1; ; draw += 1) {
    const patient = draw > LOCK_FREE_DRAWS;
    if (draw === LOCK_FREE_DRAWS + 1)
      await db`select pg_advisory_xact_lock(hashtext(${`port_pool:${input.externalIp}`}))`;
    const [drawn] = await db<{ p: number }[]>`
      select p from generate_series(${input.pool.from}::int, ${input.pool.to}::int) p
      where not exists (select 1 from port_allocations a where a.external_ip = ${input.externalIp}::inet and a.external_port = p)
        and (${input.internalPort}::int is not null or not exists (
              select 1 from port_allocations a
              where a.service_instance_id = ${input.serviceId} and a.internal_port = p and a.protocol = ${input.protocol}))
      order by random()
      limit 1`;
    if (!drawn) return undefined;
    const key = `port:${input.externalIp}:${drawn.p}`;
    if (patient) await db`select pg_advisory_xact_lock(hashtext(${key}))`;
    else {
      const [claim] = await db<
        { claimed: boolean }[]
      >`select pg_try_advisory_xact_lock(hashtext(${key})) as claimed`;
      if (!claim!.claimed) continue;
    }
    // Taken and committed since it was drawn: another draw.
    const [made] = await db<{ id: string }[]>`
      insert into port_allocations (id, service_instance_id, resource_id, external_ip, external_port, internal_port,
                                    protocol, is_primary, is_system, allocated_at)
      values (${randomUUID()}, ${input.serviceId}, ${input.resourceId}, ${input.externalIp}::inet, ${drawn.p},
              coalesce(${input.internalPort}::int, ${drawn.p}), ${input.protocol}, ${input.isPrimary}, ${input.isSystem}, ${now})
      on conflict (external_ip, external_port) do nothing
      returning id`;
    if (made) return findAllocation(db, input.serviceId, made.id);
  }
}
const LOCK_FREE_DRAWS = 3;

export async function deleteAllocation(db: Db, serviceId: string, allocationId: string): Promise<boolean> {
  const rows = await db`
    delete from port_allocations where id = ${allocationId} and service_instance_id = ${serviceId} returning 1`;
  return rows.length > 0;
}

/** The service's primary unit (a machine or workload), what its allocations forward to. */
export async function findPrimaryUnit(db: Db, serviceId: string): Promise<{ id: string } | undefined> {
  const [row] = await db<{ id: string }[]>`
    select id from service_resources
    where service_instance_id = ${serviceId} and deleted_at is null and role = 'primary'
      and kind in ('virtual_machine', 'workload')
    order by created_at limit 1`;
  return row;
}

/** A service and its organization, locked (staff's changes to it go one at a time). */
export async function lockServiceForStaff(
  db: Db,
  serviceId: string,
): Promise<{ id: string; project_id: string; organization_id: string } | undefined> {
  const [row] = await db<{ id: string; project_id: string; organization_id: string }[]>`
    select s.id, s.project_id, p.organization_id from service_instances s join projects p on p.id = s.project_id
    where s.id = ${serviceId} for update of s`;
  return row;
}

export async function setExtraSlots(
  db: Db,
  serviceId: string,
  extraSlots: number,
  now: Date,
): Promise<boolean> {
  const rows = await db`
    update service_instances set extra_slots = ${extraSlots}, updated_at = ${now} where id = ${serviceId} returning 1`;
  return rows.length > 0;
}

export interface EdgeRow {
  id: string;
  /** The external address whose allocations it serves. */
  address: string;
  control_url: string;
  applied_generation: string;
}

/** Edges whose heartbeat is recent (within three of their intervals, by the database's clock). */
export async function liveEdges(db: Db): Promise<EdgeRow[]> {
  return db<EdgeRow[]>`
    select id, host(address) as address, control_url, applied_generation from edge_nodes
    where heartbeat_at > now() - make_interval(secs => heartbeat_seconds * 3)
    order by id`;
}

/** The service's product features and kind (a product without `external_access` has no such routes). */
export async function productFeatures(db: Db, productId: string): Promise<string[]> {
  const [row] = await db<
    { features: string[] }[]
  >`select features from catalog_products where id = ${productId}`;
  return row?.features ?? [];
}

/** Addresses of live edges running an HTTP or HTTPS ingress listener, and their ports (migration 0031). */
export async function liveIngresses(
  db: Db,
): Promise<{ address: string; http_port: number | null; https_port: number | null }[]> {
  return db<{ address: string; http_port: number | null; https_port: number | null }[]>`
    select host(address) as address, ingress_http_port as http_port, ingress_https_port as https_port
    from edge_nodes
    where heartbeat_at > now() - make_interval(secs => heartbeat_seconds * 3)
      and (ingress_http_port is not null or ingress_https_port is not null)
    order by address, id`;
}

export interface HttpDomainRow {
  id: string;
  hostname: string;
  status: 'pending' | 'active' | 'failed';
  status_reason: string | null;
}

export async function findHttpDomain(db: Db, allocationId: string): Promise<HttpDomainRow | undefined> {
  const [row] = await db<HttpDomainRow[]>`
    select id, hostname, status, status_reason from http_names
    where allocation_id = ${allocationId} and kind = 'http_domain'`;
  return row;
}

/**
 * Claims `hostname` for the allocation; undefined when another row holds the name (a race lost: the
 * unique hostname decides, the loser waits for the winner's commit and inserts nothing).
 */
export async function claimHttpDomain(
  db: Db,
  input: { serviceId: string; organizationId: string; allocationId: string; hostname: string },
  now: Date,
): Promise<HttpDomainRow | undefined> {
  const [row] = await db<HttpDomainRow[]>`
    insert into http_names (id, hostname, service_instance_id, organization_id, kind, allocation_id, status,
                            created_at, updated_at)
    values (${randomUUID()}, ${input.hostname}, ${input.serviceId}, ${input.organizationId.toLowerCase()},
            'http_domain', ${input.allocationId}, 'pending', ${now}, ${now})
    on conflict (hostname) do nothing
    returning id, hostname, status, status_reason`;
  return row;
}

/**
 * Removes the allocation's HTTP domain: the name's claim, its certificate and any open challenge for it.
 * Answers the name released, or null when it had none.
 */
export async function releaseHttpDomain(db: Db, allocationId: string): Promise<string | null> {
  const [row] = await db<{ hostname: string }[]>`
    delete from http_names where allocation_id = ${allocationId} and kind = 'http_domain' returning hostname`;
  if (!row) return null;
  await db`delete from tls_certificates where hostname = ${row.hostname}`;
  await db`delete from acme_challenges where hostname = ${row.hostname}`;
  return row.hostname;
}

export async function parentDomainNames(db: Db): Promise<string[]> {
  const rows = await db<{ name: string }[]>`select name from parent_domains order by name`;
  return rows.map((r) => r.name);
}
