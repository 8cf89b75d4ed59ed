// All SQL of Domain Connect links (migration 0035).
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';

export interface LinkRow {
  id: string;
  service_instance_id: string;
  domain: string;
  host: string;
  status: 'pending' | 'active' | 'failed';
  srv_target: string;
  srv_port: number;
  apply_url: string | null;
  dns_provider_display_name: string | null;
  template_confirmed: boolean | null;
  last_error: string | null;
  last_verified_at: Date | null;
  created_at: Date;
}

const COLUMNS = (db: Db) => db`
  id, service_instance_id, domain, host, status, srv_target, srv_port, apply_url, dns_provider_display_name,
  template_confirmed, last_error, last_verified_at, created_at`;

export async function productFeatures(db: Db, productId: string): Promise<string[]> {
  const [row] = await db<
    { features: string[] }[]
  >`select features from catalog_products where id = ${productId}`;
  return row?.features ?? [];
}

export async function linksOf(db: Db, serviceId: string): Promise<LinkRow[]> {
  return db<LinkRow[]>`
    select ${COLUMNS(db)} from domain_connect_links where service_instance_id = ${serviceId}
    order by created_at, id`;
}

export async function findLink(db: Db, serviceId: string, id: string, lock = false): Promise<LinkRow | null> {
  const [row] = await db<LinkRow[]>`
    select ${COLUMNS(db)} from domain_connect_links where id = ${id} and service_instance_id = ${serviceId}
    ${lock ? db`for update` : db``}`;
  return row ?? null;
}

export async function countLinks(db: Db, serviceId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from domain_connect_links where service_instance_id = ${serviceId}`;
  return row!.n;
}

export async function isLinked(db: Db, serviceId: string, domain: string, host: string): Promise<boolean> {
  const rows = await db`
    select 1 from domain_connect_links where service_instance_id = ${serviceId} and domain = ${domain} and host = ${host}`;
  return rows.length > 0;
}

/** The zones the platform serves besides PLATFORM_DOMAIN: the parent domains of game subdomains. */
export async function parentDomains(db: Db): Promise<string[]> {
  return (await db<{ name: string }[]>`select name from parent_domains`).map((r) => r.name);
}

/** The service's slug and its primary allocation's external port (null without one). */
export async function srvOf(db: Db, serviceId: string): Promise<{ slug: string; port: number | null }> {
  const [row] = await db<{ slug: string; port: number | null }[]>`
    select s.slug, (select external_port from port_allocations a where a.service_instance_id = s.id and a.is_primary) as port
    from service_instances s where s.id = ${serviceId}`;
  return row!;
}

/** The new pending link, or null when the pair is linked already (the unique pair decides a race). */
export async function insertLink(
  db: Db,
  input: {
    serviceId: string;
    domain: string;
    host: string;
    srvTarget: string;
    srvPort: number;
    applyUrl: string | null;
    providerId: string;
    providerDisplayName: string;
    templateConfirmed: boolean | null;
  },
  now: Date,
): Promise<LinkRow | null> {
  const [row] = await db<LinkRow[]>`
    insert into domain_connect_links (id, service_instance_id, domain, host, status, srv_target, srv_port, apply_url,
                                      dns_provider_id, dns_provider_display_name, template_confirmed, created_at)
    values (${randomUUID()}, ${input.serviceId}, ${input.domain}, ${input.host}, 'pending', ${input.srvTarget},
            ${input.srvPort}, ${input.applyUrl}, ${input.providerId}, ${input.providerDisplayName},
            ${input.templateConfirmed}, ${now})
    on conflict (service_instance_id, domain, host) do nothing
    returning ${COLUMNS(db)}`;
  return row ?? null;
}

export async function deleteLink(db: Db, id: string): Promise<void> {
  await db`delete from domain_connect_links where id = ${id}`;
}

/** Records a verify's outcome; `verifiedAt` null keeps the previous one (the lookup itself failed). */
export async function recordVerify(
  db: Db,
  id: string,
  outcome: { status: LinkRow['status']; lastError: string | null; verifiedAt: Date | null },
): Promise<LinkRow> {
  const [row] = await db<LinkRow[]>`
    update domain_connect_links
    set status = ${outcome.status}, last_error = ${outcome.lastError},
        last_verified_at = coalesce(${outcome.verifiedAt}, last_verified_at)
    where id = ${id}
    returning ${COLUMNS(db)}`;
  return row!;
}
