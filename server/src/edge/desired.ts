// What the edge should forward, read from PostgreSQL (migration 0021): the allocations on its address
// whose unit is live and has an address, and the generation of that state.
import type { Sql } from '../db/client.js';
import type { ExposedPort } from '../substrate/driver.js';
import type { EgressRules } from './egress.js';
import type { EgressRule } from './egress-rules.js';
import { compileRule, type CompiledRule, type IngressRules } from './firewall.js';

export interface DesiredPort {
  id: string;
  /** The machine or workload it forwards to (whose firewall applies). */
  resourceId: string;
  externalIp: string;
  externalPort: number;
  protocol: 'tcp' | 'udp';
  targetAddress: string;
  targetPort: number;
}

export interface DesiredState {
  generation: number;
  ports: DesiredPort[];
  /** The ingress rules of the units it forwards to. */
  ingress: IngressRules;
  /** The enabled egress rules of every live unit that has some (whichever edge forwards to it). */
  egress: EgressRules;
  /** Every port those units must be reachable on (their allocations on any edge's address). */
  exposed: Map<string, ExposedPort[]>;
}

/** One snapshot: the generation and the rows it counts, read in the same repeatable-read transaction. */
export async function readDesired(sql: Sql, address: string): Promise<DesiredState> {
  return sql.begin('isolation level repeatable read read only', async (tx) => {
    const [state] = await tx<{ generation: string }[]>`select generation from edge_state`;
    const rows = await tx<
      {
        id: string;
        resource_id: string;
        external_ip: string;
        external_port: number;
        protocol: 'tcp' | 'udp';
        target_address: string;
        target_port: number;
      }[]
    >`
      select a.id, a.resource_id, host(a.external_ip) as external_ip, a.external_port, a.protocol,
             host(r.address) as target_address, a.internal_port as target_port
      from port_allocations a join service_resources r on r.id = a.resource_id
      where a.external_ip = ${address}::inet and r.deleted_at is null and r.address is not null`;
    const units = [...new Set(rows.map((r) => r.resource_id))];
    // Enabled ingress rules of those units, in evaluation order (egress is not enforced here).
    const rules = await tx<
      {
        resource_id: string;
        action: 'allow' | 'block';
        protocol: 'tcp' | 'udp' | 'icmp' | 'any';
        cidr: string | null;
        port_from: number | null;
        port_to: number | null;
      }[]
    >`
      select resource_id, action, protocol, case when cidr is null then null else cidr::text end as cidr,
             port_from, port_to
      from firewall_rules
      where resource_id = any(${units}::uuid[]) and direction = 'ingress' and enabled
      order by resource_id, priority, created_at, id`;
    const egressRows = await tx<({ resource_id: string } & EgressRule)[]>`
      select f.resource_id, f.action, f.protocol, case when f.cidr is null then null else f.cidr::text end as cidr,
             f.port_from, f.port_to
      from firewall_rules f join service_resources r on r.id = f.resource_id
      where f.direction = 'egress' and f.enabled and r.deleted_at is null
      order by f.resource_id, f.priority, f.created_at, f.id`;
    const egress: EgressRules = new Map();
    for (const { resource_id, ...rule } of egressRows)
      egress.set(resource_id, [...(egress.get(resource_id) ?? []), rule]);
    const targets = await tx<{ resource_id: string; protocol: 'tcp' | 'udp'; port: number }[]>`
      select distinct resource_id, protocol, internal_port as port from port_allocations
      where resource_id = any(${units}::uuid[]) order by resource_id, protocol, port`;
    const exposed = new Map<string, ExposedPort[]>();
    for (const t of targets)
      exposed.set(t.resource_id, [
        ...(exposed.get(t.resource_id) ?? []),
        { protocol: t.protocol, port: t.port },
      ]);
    const ingress: IngressRules = new Map();
    for (const rule of rules) {
      let list: CompiledRule[] | undefined = ingress.get(rule.resource_id);
      if (!list) ingress.set(rule.resource_id, (list = []));
      list.push(compileRule(rule));
    }
    return {
      ingress,
      egress,
      exposed,
      generation: Number(state?.generation ?? 0),
      ports: rows.map((r) => ({
        id: r.id,
        resourceId: r.resource_id,
        externalIp: r.external_ip,
        externalPort: r.external_port,
        protocol: r.protocol,
        targetAddress: r.target_address,
        targetPort: r.target_port,
      })),
    };
  });
}

export async function currentGeneration(sql: Sql): Promise<number> {
  const [state] = await sql<{ generation: string }[]>`select generation from edge_state`;
  return Number(state?.generation ?? 0);
}

export async function reportEdge(
  sql: Sql,
  edge: {
    id: string;
    address: string;
    controlUrl: string;
    heartbeatSeconds: number;
    startedAt: Date;
    egressEnforced: boolean;
    /** The ingress's bound ports (migration 0031); null: off. */
    ingressHttpPort: number | null;
    ingressHttpsPort: number | null;
  },
  appliedGeneration: number,
): Promise<void> {
  await sql`
    insert into edge_nodes (id, address, control_url, applied_generation, heartbeat_seconds, started_at, heartbeat_at,
                            egress_enforced, ingress_http_port, ingress_https_port)
    values (${edge.id}, ${edge.address}::inet, ${edge.controlUrl}, ${appliedGeneration}, ${edge.heartbeatSeconds},
            ${edge.startedAt}, now(), ${edge.egressEnforced}, ${edge.ingressHttpPort}, ${edge.ingressHttpsPort})
    on conflict (id) do update set address = excluded.address, control_url = excluded.control_url,
      applied_generation = excluded.applied_generation, heartbeat_seconds = excluded.heartbeat_seconds,
      started_at = excluded.started_at, heartbeat_at = now(), egress_enforced = excluded.egress_enforced,
      ingress_http_port = excluded.ingress_http_port, ingress_https_port = excluded.ingress_https_port`;
}

/** Which of these unit ids are resources of this database (deleted ones too): the units an edge may clean up. */
export async function unitsOfThisDatabase(sql: Sql, unitIds: string[]): Promise<Set<string>> {
  if (unitIds.length === 0) return new Set();
  const rows = await sql<
    { id: string }[]
  >`select id from service_resources where id = any(${unitIds}::uuid[])`;
  return new Set(rows.map((r) => r.id));
}

/** An edge that stops says so, so the API does not wait for it (or call it degraded) for long. */
export async function forgetEdge(sql: Sql, id: string): Promise<void> {
  await sql`delete from edge_nodes where id = ${id}`;
}
