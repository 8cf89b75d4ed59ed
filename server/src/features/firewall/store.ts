// All SQL of the firewall (migration 0021): a machine's rules, their change generation, and what the
// edges applied.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import type { RuleValues } from './rules.js';

export interface RuleRow extends RuleValues {
  id: string;
  resource_id: string;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, resource_id, direction, action, protocol, priority, enabled, description,
  case when cidr is null then null else cidr::text end as cidr, port_from, port_to, created_at, updated_at`;

export async function listRules(db: Db, resourceId: string): Promise<RuleRow[]> {
  return db<RuleRow[]>`
    select ${db.unsafe(COLUMNS)} from firewall_rules where resource_id = ${resourceId}
    order by (direction = 'egress'), priority, created_at, id`;
}

export async function findRule(db: Db, resourceId: string, ruleId: string): Promise<RuleRow | undefined> {
  const [row] = await db<RuleRow[]>`
    select ${db.unsafe(COLUMNS)} from firewall_rules where id = ${ruleId} and resource_id = ${resourceId}`;
  return row;
}

export async function countDirection(
  db: Db,
  resourceId: string,
  direction: string,
  exceptId?: string,
): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from firewall_rules
    where resource_id = ${resourceId} and direction = ${direction}
      ${exceptId ? db`and id <> ${exceptId}` : db``}`;
  return row!.n;
}

const values = (r: RuleValues) => ({
  direction: r.direction,
  action: r.action,
  protocol: r.protocol,
  priority: r.priority,
  enabled: r.enabled,
  description: r.description,
  cidr: r.cidr,
  port_from: r.port_from,
  port_to: r.port_to,
});

export async function insertRules(db: Db, resourceId: string, rules: RuleValues[], now: Date): Promise<void> {
  if (rules.length === 0) return;
  // Equal priorities have no defined order (document 2 §4 "Firewall"); they share the replace's time.
  const rows = rules.map((r) => ({
    id: randomUUID(),
    resource_id: resourceId,
    ...values(r),
    created_at: now,
    updated_at: now,
  }));
  await db`
    insert into firewall_rules ${db(
      rows,
      'id',
      'resource_id',
      'direction',
      'action',
      'protocol',
      'priority',
      'enabled',
      'description',
      'cidr',
      'port_from',
      'port_to',
      'created_at',
      'updated_at',
    )}`;
}

export async function insertRule(db: Db, resourceId: string, rule: RuleValues, now: Date): Promise<string> {
  const id = randomUUID();
  await db`
    insert into firewall_rules (id, resource_id, direction, action, protocol, priority, enabled, description, cidr,
                                port_from, port_to, created_at, updated_at)
    values (${id}, ${resourceId}, ${rule.direction}, ${rule.action}, ${rule.protocol}, ${rule.priority}, ${rule.enabled},
            ${rule.description}, ${rule.cidr}, ${rule.port_from}, ${rule.port_to}, ${now}, ${now})`;
  return id;
}

export async function updateRule(
  db: Db,
  resourceId: string,
  ruleId: string,
  rule: RuleValues,
  now: Date,
): Promise<void> {
  await db`
    update firewall_rules set direction = ${rule.direction}, action = ${rule.action}, protocol = ${rule.protocol},
      priority = ${rule.priority}, enabled = ${rule.enabled}, description = ${rule.description}, cidr = ${rule.cidr},
      port_from = ${rule.port_from}, port_to = ${rule.port_to}, updated_at = ${now}
    where id = ${ruleId} and resource_id = ${resourceId}`;
}

export async function deleteRules(db: Db, resourceId: string, ruleId?: string): Promise<number> {
  const rows = await db`
    delete from firewall_rules where resource_id = ${resourceId} ${ruleId ? db`and id = ${ruleId}` : db``} returning 1`;
  return rows.length;
}

/**
 * Records that the machine's rules changed as of the edge state's generation the change produces. The
 * generation is otherwise bumped at commit (migration 0039): this bumps it now, to know it.
 */
export async function markChanged(db: Db, resourceId: string): Promise<void> {
  await db`
    update service_resources set firewall_generation = bump_generation_now('edge')
    where id = ${resourceId}`;
}

export async function enforcement(
  db: Db,
  resourceId: string,
): Promise<{ generation: number; applied_generation: number | null; egress_enforced: boolean }> {
  // Egress counts as enforced only while some edge is live and every live edge holds it.
  const [row] = await db<{ generation: string; applied: string | null; egress: boolean | null }[]>`
    select r.firewall_generation as generation, e.applied, e.egress
    from service_resources r,
         lateral (select min(applied_generation) as applied, bool_and(egress_enforced) as egress from edge_nodes
                  where heartbeat_at > now() - make_interval(secs => heartbeat_seconds * 3)) e
    where r.id = ${resourceId}`;
  return {
    generation: Number(row?.generation ?? 0),
    applied_generation: row?.applied === null || row?.applied === undefined ? null : Number(row.applied),
    egress_enforced: row?.egress === true,
  };
}
