// All SQL of staff's parent domains (migration 0029).
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';

export interface ParentDomainRow {
  id: string;
  name: string;
  created_at: Date;
}

export async function listParentDomains(db: Db): Promise<ParentDomainRow[]> {
  return db<ParentDomainRow[]>`select id, name, created_at from parent_domains order by name`;
}

/** Registrations one at a time, so two overlapping names cannot both pass the overlap check. */
export async function lockRegistrations(db: Db): Promise<void> {
  await db`select pg_advisory_xact_lock(hashtext('parent_domains'))`;
}

export async function insertParentDomain(db: Db, name: string, now: Date): Promise<ParentDomainRow | null> {
  const [row] = await db<ParentDomainRow[]>`
    insert into parent_domains (id, name, created_at) values (${randomUUID()}, ${name}, ${now})
    on conflict (name) do nothing
    returning id, name, created_at`;
  return row ?? null;
}

/** Deleted (true), in use by game subdomains ('in-use'), or unknown (false); one statement decides. */
export async function deleteParentDomain(db: Db, id: string): Promise<boolean | 'in-use'> {
  const [row] = await db<{ id: string }[]>`select id from parent_domains where id = ${id} for update`;
  if (!row) return false;
  // Game subdomains, and names on the HTTP ingress one label under it, are the zone's.
  const used = await db`
    select 1 from game_subdomains where parent_domain_id = ${id}
    union all
    select 1 from http_names n join parent_domains p on n.hostname like '%.' || p.name
    where p.id = ${id} and position('.' in left(n.hostname, -char_length(p.name) - 1)) = 0
    limit 1`;
  if (used.length > 0) return 'in-use';
  await db`delete from parent_domains where id = ${id}`;
  return true;
}

/** Every zone the platform serves: PLATFORM_DOMAIN and the parent domains (no claim may lie in one). */
export async function platformZones(db: Db, platformDomain: string): Promise<string[]> {
  const rows = await db<{ name: string }[]>`select name from parent_domains`;
  return [platformDomain, ...rows.map((r) => r.name)];
}
