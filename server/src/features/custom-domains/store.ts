// All SQL of custom domains: the `custom_domain` rows of `http_names` (migration 0030), with the
// expiry of their certificate. The row is the claim of the name; its unique hostname decides a race.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';

export interface CustomDomainRow {
  id: string;
  hostname: string;
  status: 'pending' | 'active' | 'failed';
  status_reason: string | null;
  certificate_expires_at: Date | null;
  created_at: Date;
}

const COLUMNS = (db: Db) => db`
  n.id, n.hostname, n.status, n.status_reason, c.not_after as certificate_expires_at, n.created_at`;

export async function customDomainsOf(db: Db, serviceId: string): Promise<CustomDomainRow[]> {
  return db<CustomDomainRow[]>`
    select ${COLUMNS(db)} from http_names n left join tls_certificates c on c.hostname = n.hostname
    where n.service_instance_id = ${serviceId} and n.kind = 'custom_domain' order by n.created_at, n.hostname`;
}

export async function findCustomDomain(
  db: Db,
  serviceId: string,
  id: string,
): Promise<CustomDomainRow | null> {
  const [row] = await db<CustomDomainRow[]>`
    select ${COLUMNS(db)} from http_names n left join tls_certificates c on c.hostname = n.hostname
    where n.id = ${id} and n.service_instance_id = ${serviceId} and n.kind = 'custom_domain'`;
  return row ?? null;
}

export async function countCustomDomains(db: Db, serviceId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from http_names where service_instance_id = ${serviceId} and kind = 'custom_domain'`;
  return row?.n ?? 0;
}

/** The new pending row's id, or null when another row holds the name (the unique name decides a race). */
export async function insertCustomDomain(
  db: Db,
  input: { serviceId: string; organizationId: string; hostname: string },
  now: Date,
): Promise<string | null> {
  const id = randomUUID();
  // The attach enqueues the first attempt itself; the sweep looks only if that one was lost.
  const firstSweep = new Date(now.getTime() + 2 * 60_000);
  const rows = await db`
    insert into http_names (id, hostname, service_instance_id, organization_id, kind, status, status_reason,
                            attempts, next_attempt_at, created_at, updated_at)
    values (${id}, ${input.hostname}, ${input.serviceId}, ${input.organizationId}, 'custom_domain', 'pending',
            'Waiting for the first certificate attempt.', 0, ${firstSweep}, ${now}, ${now})
    on conflict (hostname) do nothing
    returning id`;
  return rows.length > 0 ? id : null;
}

/** Deletes the row, its certificate and its open challenges; whether a row was there. */
export async function deleteCustomDomain(db: Db, serviceId: string, id: string): Promise<string | null> {
  const [row] = await db<{ hostname: string }[]>`
    delete from http_names where id = ${id} and service_instance_id = ${serviceId} and kind = 'custom_domain'
    returning hostname`;
  if (!row) return null;
  await db`delete from tls_certificates where hostname = ${row.hostname}`;
  await db`delete from acme_challenges where hostname = ${row.hostname}`;
  return row.hostname;
}
