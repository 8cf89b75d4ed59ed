// What the platform's DNS serves, read from PostgreSQL (migration 0029).
import type { Sql } from '../db/client.js';

export interface DnsSnapshot {
  generation: number;
  parentDomains: { name: string }[];
  /** Active game subdomains: their records are made (record_ip, record_port). */
  gameSubdomains: {
    subdomain: string;
    parent: string;
    recordIp: string;
    recordPort: number;
    hasSrv: boolean;
  }[];
  /** Services with a primary allocation (their platform name's A record), not ended. */
  gameServices: { id: string; slug: string; address: string }[];
  /** Web services, not ended: their `apps.` host points at the HTTP ingress. */
  webServices: { id: string; slug: string }[];
  /** Names on the HTTP ingress (custom and HTTP domains): those under a parent domain point at it. */
  httpNames: { hostname: string }[];
}

/**
 * One statement, so one snapshot (the generation and the rows it counts agree) in one round trip: a
 * change's way to an answer is the NOTIFY and this query.
 */
export async function readSnapshot(sql: Sql): Promise<DnsSnapshot> {
  const [row] = await sql<{ snapshot: DnsSnapshot }[]>`
    with live as (
      select s.id, s.slug, s.product_id from service_instances s
      join subscriptions sub on sub.id = s.subscription_id
      where s.status <> 'ended' and sub.status <> 'ended'
    )
    select json_build_object(
      'generation', (select generation from dns_state),
      'parentDomains', coalesce((select json_agg(json_build_object('name', name)) from parent_domains), '[]'),
      'gameSubdomains', coalesce((
        select json_agg(json_build_object('subdomain', g.subdomain, 'parent', p.name, 'recordIp', host(g.record_ip),
                                          'recordPort', g.record_port, 'hasSrv', g.has_srv_record))
        from game_subdomains g join parent_domains p on p.id = g.parent_domain_id
        where g.status = 'active'), '[]'),
      'gameServices', coalesce((
        select json_agg(json_build_object('id', l.id, 'slug', l.slug, 'address', host(a.external_ip)))
        from live l join port_allocations a on a.service_instance_id = l.id and a.is_primary), '[]'),
      'webServices', coalesce((
        select json_agg(json_build_object('id', l.id, 'slug', l.slug))
        from live l join catalog_products cp on cp.id = l.product_id where cp.kind = 'web_app'), '[]'),
      'httpNames', coalesce((
        select json_agg(json_build_object('hostname', n.hostname))
        from http_names n join live l on l.id = n.service_instance_id), '[]')
    ) as snapshot`;
  const snapshot = row!.snapshot;
  return { ...snapshot, generation: Number(snapshot.generation) };
}

export async function currentGeneration(sql: Sql): Promise<number> {
  const [state] = await sql<{ generation: string }[]>`select generation from dns_state`;
  return Number(state?.generation ?? 0);
}
