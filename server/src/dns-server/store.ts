// What the platform's DNS serves, read from PostgreSQL (migration 0029) in one repeatable-read
// transaction, so the generation and the rows it counts agree.
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
}

export async function readSnapshot(sql: Sql): Promise<DnsSnapshot> {
  return sql.begin('isolation level repeatable read read only', async (tx) => {
    const [state] = await tx<{ generation: string }[]>`select generation from dns_state`;
    const parentDomains = await tx<{ name: string }[]>`select name from parent_domains`;
    const gameSubdomains = await tx<
      { subdomain: string; parent: string; record_ip: string; record_port: number; has_srv_record: boolean }[]
    >`
      select g.subdomain, p.name as parent, host(g.record_ip) as record_ip, g.record_port, g.has_srv_record
      from game_subdomains g join parent_domains p on p.id = g.parent_domain_id
      where g.status = 'active'`;
    const live = tx`s.status <> 'ended' and sub.status <> 'ended'`;
    const gameServices = await tx<{ id: string; slug: string; address: string }[]>`
      select s.id, s.slug, host(a.external_ip) as address
      from service_instances s
      join subscriptions sub on sub.id = s.subscription_id
      join port_allocations a on a.service_instance_id = s.id and a.is_primary
      where ${live}`;
    const webServices = await tx<{ id: string; slug: string }[]>`
      select s.id, s.slug
      from service_instances s
      join subscriptions sub on sub.id = s.subscription_id
      join catalog_products cp on cp.id = s.product_id
      where cp.kind = 'web_app' and ${live}`;
    return {
      generation: Number(state?.generation ?? 0),
      parentDomains: [...parentDomains],
      gameSubdomains: gameSubdomains.map((g) => ({
        subdomain: g.subdomain,
        parent: g.parent,
        recordIp: g.record_ip,
        recordPort: g.record_port,
        hasSrv: g.has_srv_record,
      })),
      gameServices: [...gameServices],
      webServices: [...webServices],
    };
  });
}

export async function currentGeneration(sql: Sql): Promise<number> {
  const [state] = await sql<{ generation: string }[]>`select generation from dns_state`;
  return Number(state?.generation ?? 0);
}
