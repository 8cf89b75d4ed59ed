// What the HTTP ingress serves, read from PostgreSQL in one snapshot: the host names it routes and
// where to (DECISIONS.md §6 "DNS and domains"), and the certificates it presents by SNI. Rows of
// `http_names` and `tls_certificates` bump `edge_state` (migration 0030), so the edge rereads this when
// they change, as it does for its ports.
import type { Sql } from '../../db/client.js';
import { webPlatformHost } from '../../dns/platform-names.js';

/** The port the web app's program listens on at its unit's address (workloads/web-app.ts). */
export const WEB_APP_PORT = 8080;

export interface IngressTarget {
  address: string;
  port: number;
}

export interface CertificateRow {
  hostname: string;
  certificate_pem: string;
  private_key_sealed: string;
  updated_at: Date;
}

export interface IngressState {
  /** Host name (lowercase) to the unit address and port its requests go to. */
  routes: Map<string, IngressTarget>;
  certificates: CertificateRow[];
}

export async function readIngressState(sql: Sql, platformDomain: string): Promise<IngressState> {
  return sql.begin('isolation level repeatable read read only', async (tx) => {
    // Live web services: their platform host goes to their primary workload's program.
    const web = await tx<{ id: string; slug: string; address: string }[]>`
      select s.id, s.slug, host(r.address) as address
      from service_instances s
        join subscriptions sub on sub.id = s.subscription_id
        join catalog_products cp on cp.id = s.product_id
        join service_resources r on r.service_instance_id = s.id
      where s.status <> 'ended' and sub.status <> 'ended' and cp.kind = 'web_app'
        and r.role = 'primary' and r.kind = 'workload' and r.deleted_at is null and r.address is not null`;
    // Names held on the ingress: a custom domain goes where the platform host does (the service's primary
    // workload's program); an allocation's HTTP domain to that allocation's unit and internal port. Every
    // status is routed over HTTP (the name is this service's while it holds the row, and HTTP-01
    // validation needs it); HTTPS needs a certificate besides.
    const names = await tx<{ hostname: string; address: string; port: number }[]>`
      select n.hostname, host(r.address) as address, ${WEB_APP_PORT}::int as port
      from http_names n
        join service_resources r on r.service_instance_id = n.service_instance_id
      where n.kind = 'custom_domain' and r.role = 'primary' and r.kind = 'workload' and r.deleted_at is null
        and r.address is not null
      union all
      select n.hostname, host(r.address) as address, a.internal_port as port
      from http_names n
        join port_allocations a on a.id = n.allocation_id
        join service_resources r on r.id = a.resource_id
      where n.kind = 'http_domain' and r.deleted_at is null and r.address is not null`;
    const certificates = await tx<CertificateRow[]>`
      select hostname, certificate_pem, private_key_sealed, updated_at from tls_certificates order by hostname`;
    const routes = new Map<string, IngressTarget>();
    for (const s of web)
      routes.set(webPlatformHost(s.slug, s.id, platformDomain), { address: s.address, port: WEB_APP_PORT });
    for (const n of names) routes.set(n.hostname, { address: n.address, port: n.port });
    return { routes, certificates };
  });
}

/** The answer of an HTTP-01 challenge for `token`, whatever the name asked for. */
export async function challengeAnswer(sql: Sql, token: string): Promise<string | null> {
  const [row] = await sql<{ key_authorization: string }[]>`
    select key_authorization from acme_challenges where token = ${token}`;
  return row?.key_authorization ?? null;
}
