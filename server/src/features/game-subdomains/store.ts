// All SQL of game subdomains (migration 0029). Publishing a subdomain's records is writing its
// record_ip/record_port and `active`: the platform's DNS server serves active rows (dns-server/store.ts).
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';

export interface GameSubdomainRow {
  id: string;
  service_instance_id: string;
  subdomain: string;
  parent_domain_id: string;
  parent_domain_name: string;
  status: 'pending' | 'active' | 'failed';
  has_srv_record: boolean;
  record_ip: string | null;
  record_port: number | null;
  last_synced_at: Date | null;
  last_error: string | null;
  attempts: number;
  created_at: Date;
}

const COLUMNS = (db: Db) => db`
  g.id, g.service_instance_id, g.subdomain, g.parent_domain_id, p.name as parent_domain_name, g.status,
  g.has_srv_record, host(g.record_ip) as record_ip, g.record_port, g.last_synced_at, g.last_error, g.attempts,
  g.created_at`;

export async function productFeatures(db: Db, productId: string): Promise<string[]> {
  const [row] = await db<
    { features: string[] }[]
  >`select features from catalog_products where id = ${productId}`;
  return row?.features ?? [];
}

export async function listZones(db: Db): Promise<{ id: string; name: string }[]> {
  return db<{ id: string; name: string }[]>`select id, name from parent_domains order by name`;
}

export async function findZone(db: Db, id: string): Promise<{ id: string; name: string } | null> {
  const [row] = await db<
    { id: string; name: string }[]
  >`select id, name from parent_domains where id = ${id}`;
  return row ?? null;
}

export async function subdomainsOf(db: Db, serviceId: string): Promise<GameSubdomainRow[]> {
  return db<GameSubdomainRow[]>`
    select ${COLUMNS(db)} from game_subdomains g join parent_domains p on p.id = g.parent_domain_id
    where g.service_instance_id = ${serviceId} order by g.created_at`;
}

export async function findSubdomain(
  db: Db,
  serviceId: string,
  id: string,
  lock = false,
): Promise<GameSubdomainRow | null> {
  const [row] = await db<GameSubdomainRow[]>`
    select ${COLUMNS(db)} from game_subdomains g join parent_domains p on p.id = g.parent_domain_id
    where g.id = ${id} and g.service_instance_id = ${serviceId}
    ${lock ? db`for update of g` : db``}`;
  return row ?? null;
}

export async function isTaken(db: Db, parentDomainId: string, subdomain: string): Promise<boolean> {
  // A custom or HTTP domain on the ingress may hold the same name (http-names.ts): taken too.
  const rows = await db`
    select 1 from game_subdomains where parent_domain_id = ${parentDomainId} and subdomain = ${subdomain}
    union all
    select 1 from http_names n join parent_domains p on n.hostname = ${subdomain} || '.' || p.name
    where p.id = ${parentDomainId}`;
  return rows.length > 0;
}

/** The service's primary allocation (what the records point at), or null while it has none. */
export async function primaryAllocation(
  db: Db,
  serviceId: string,
): Promise<{ ip: string; port: number } | null> {
  const [row] = await db<{ ip: string; port: number }[]>`
    select host(external_ip) as ip, external_port as port from port_allocations
    where service_instance_id = ${serviceId} and is_primary`;
  return row ?? null;
}

/**
 * The new row, published at once when `records` are given (else pending), or null when another row
 * holds the name: the unique name decides a race in this one statement.
 */
export async function insertSubdomain(
  db: Db,
  input: {
    serviceId: string;
    parentDomainId: string;
    subdomain: string;
    hasSrv: boolean;
    records: { ip: string; port: number } | null;
  },
  now: Date,
): Promise<string | null> {
  const id = randomUUID();
  const { records } = input;
  const rows = await db`
    insert into game_subdomains (id, service_instance_id, parent_domain_id, subdomain, status, record_ip, record_port,
                                 has_srv_record, last_error, last_synced_at, created_at)
    select ${id}::uuid, ${input.serviceId}::uuid, ${input.parentDomainId}::uuid, ${input.subdomain}::text,
           ${records ? 'active' : 'pending'}::text,
           ${records?.ip ?? null}::inet, ${records?.port ?? null}::int, ${input.hasSrv}::boolean,
           ${records ? null : 'The service has no primary allocation to point the records at yet.'}::text,
           ${records ? now : null}::timestamptz, ${now}::timestamptz
    -- The name on the ingress (a custom or HTTP domain) holds it as well.
    where not exists (
      select 1 from http_names n join parent_domains p on n.hostname = ${input.subdomain} || '.' || p.name
      where p.id = ${input.parentDomainId})
    on conflict (parent_domain_id, subdomain) do nothing
    returning id`;
  return rows.length > 0 ? id : null;
}

export async function deleteSubdomain(db: Db, id: string): Promise<void> {
  await db`delete from game_subdomains where id = ${id}`;
}

/** The row for the publishing job, locked; null when it is gone or already active. */
export async function lockUnpublished(db: Db, id: string): Promise<GameSubdomainRow | null> {
  const [row] = await db<GameSubdomainRow[]>`
    select ${COLUMNS(db)} from game_subdomains g join parent_domains p on p.id = g.parent_domain_id
    where g.id = ${id} and g.status <> 'active' for update of g`;
  return row ?? null;
}

export async function markPublished(
  db: Db,
  id: string,
  records: { ip: string; port: number },
  now: Date,
): Promise<void> {
  await db`
    update game_subdomains
    set status = 'active', record_ip = ${records.ip}::inet, record_port = ${records.port}, last_synced_at = ${now},
        last_error = null, attempts = 0
    where id = ${id}`;
}

export async function markFailed(db: Db, id: string, error: string): Promise<number> {
  const [row] = await db<{ attempts: number }[]>`
    update game_subdomains set status = 'failed', last_error = ${error}, attempts = attempts + 1
    where id = ${id} returning attempts`;
  return row?.attempts ?? 0;
}
