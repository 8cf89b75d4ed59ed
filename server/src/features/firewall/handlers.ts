// A virtual machine's firewall (document 2 §2 "Firewall rule", §4 "Firewall"): rules are desired state
// the edge enforces (server/src/edge/firewall.ts); every value rule is in rules.ts. Changes are made under
// the service row's lock, so the per-direction ceiling holds against parallel requests.
import { actorOf, recordAudit } from '../../audit/record.js';
import type { Permission } from '../../authz/roles.js';
import type { Db } from '../../db/client.js';
import { invalidFieldValue, notFound, unprocessable, type ValidationIssue } from '../../http/errors.js';
import type { AreaHandlers, RequestContext, UserAuth } from '../../http/handler.js';
import { requireService, serviceNotFound } from '../services/access.js';
import type { ServiceAccessRow } from '../services/store.js';
import { findResource } from '../services/store.js';
import { productFeatures } from '../external-access/store.js';
import {
  checkRule,
  MAX_RULES_PER_DIRECTION,
  mergeUpdate,
  overCeiling,
  type RuleInput,
  type RuleValues,
} from './rules.js';
import * as store from './store.js';
import type { RuleRow } from './store.js';

interface Machine {
  access: ServiceAccessRow;
  resourceId: string;
}

/** The service's virtual machine, for a caller allowed `permission`, on a product with a firewall. */
async function firewallMachine(
  db: Db,
  path: { id: string; resource_id: string },
  auth: UserAuth,
  permission: Permission,
  lock = false,
): Promise<Machine> {
  const access = await requireService(db, { serviceId: path.id }, auth, permission, { lock });
  if (!(await productFeatures(db, access.service.product_id)).includes('firewall')) throw serviceNotFound();
  const resource = await findResource(db, access.service.id, path.resource_id);
  if (!resource || resource.kind !== 'virtual_machine') throw notFound('No such virtual machine.');
  return { access, resourceId: resource.id };
}

const toRule = (r: RuleRow) => ({
  id: r.id,
  resource_id: r.resource_id,
  direction: r.direction,
  action: r.action,
  protocol: r.protocol,
  priority: r.priority,
  enabled: r.enabled,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
  description: r.description,
  cidr: r.cidr,
  port_from: r.port_from,
  port_to: r.port_to,
});

async function listing(db: Db, resourceId: string) {
  const [rules, state] = await Promise.all([
    store.listRules(db, resourceId),
    store.enforcement(db, resourceId),
  ]);
  return {
    rules: rules.map(toRule),
    max_rules_per_direction: MAX_RULES_PER_DIRECTION,
    enforcement: {
      generation: state.generation,
      applied_generation: state.applied_generation,
      pending:
        state.generation > 0 &&
        (state.applied_generation === null || state.applied_generation < state.generation),
      egress_enforced: state.egress_enforced,
    },
  };
}

/** Checks each rule; every problem of every rule at once, pointed at `{prefix}/...`. */
function checkAll(inputs: RuleInput[], prefix: (i: number) => string): RuleValues[] {
  const issues: ValidationIssue[] = [];
  const rules: RuleValues[] = [];
  inputs.forEach((input, i) => {
    const checked = checkRule(input);
    if (checked.ok) rules.push(checked.rule);
    else
      for (const p of checked.problems)
        issues.push({ location: 'body', pointer: `${prefix(i)}${p.pointer}`, message: p.message });
  });
  if (issues.length > 0) throw invalidFieldValue('A firewall rule is refused; nothing was changed.', issues);
  return rules;
}

const ceiling = (direction: string) =>
  unprocessable(
    'quota-exceeded',
    `The ${direction} direction holds the most rules allowed (${MAX_RULES_PER_DIRECTION}).`,
    {
      limit: MAX_RULES_PER_DIRECTION,
    },
  );

async function audit(
  tx: Db,
  ctx: RequestContext,
  auth: UserAuth,
  m: Machine,
  action: string,
  ruleId: string | null,
) {
  await recordAudit(tx, ctx, actorOf(auth), {
    organizationId: m.access.organization_id,
    action,
    target: ruleId ? { type: 'firewall_rule', id: ruleId } : { type: 'resource', id: m.resourceId },
    projectId: m.access.service.project_id,
    serviceInstanceId: m.access.service.id,
  });
}

export const firewallHandlers: AreaHandlers<
  | 'firewallRuleList'
  | 'firewallRulesReplace'
  | 'firewallRuleCreate'
  | 'firewallRuleUpdate'
  | 'firewallRuleDelete'
> = {
  async firewallRuleList({ path, auth, ctx }) {
    const m = await firewallMachine(ctx.sql, path, auth, 'services.read');
    return { status: 200, body: await listing(ctx.sql, m.resourceId) };
  },

  async firewallRulesReplace({ path, body, auth, ctx }) {
    return ctx.sql.begin(async (tx) => {
      const m = await firewallMachine(tx, path, auth, 'services.manage', true);
      // Only a caller who may change the machine learns what is wrong with the rules (seed 001 §5).
      const rules = checkAll(body.rules, (i) => `/rules/${i}`);
      const over = overCeiling(rules);
      if (over) throw ceiling(over);
      await store.deleteRules(tx, m.resourceId);
      await store.insertRules(tx, m.resourceId, rules, ctx.clock.now());
      await store.markChanged(tx, m.resourceId);
      await audit(tx, ctx, auth, m, 'firewall.rules_replaced', null);
      return { status: 200 as const, body: await listing(tx, m.resourceId) };
    });
  },

  async firewallRuleCreate({ path, body, auth, ctx }) {
    return ctx.sql.begin(async (tx) => {
      const m = await firewallMachine(tx, path, auth, 'services.manage', true);
      const [rule] = checkAll([body], () => '');
      if ((await store.countDirection(tx, m.resourceId, rule!.direction)) >= MAX_RULES_PER_DIRECTION) {
        throw ceiling(rule!.direction);
      }
      const id = await store.insertRule(tx, m.resourceId, rule!, ctx.clock.now());
      await store.markChanged(tx, m.resourceId);
      await audit(tx, ctx, auth, m, 'firewall.rule_created', id);
      return { status: 201 as const, body: toRule((await store.findRule(tx, m.resourceId, id))!) };
    });
  },

  async firewallRuleUpdate({ path, body, auth, ctx }) {
    return ctx.sql.begin(async (tx) => {
      const m = await firewallMachine(tx, path, auth, 'services.manage', true);
      const stored = await store.findRule(tx, m.resourceId, path.rule_id);
      if (!stored) throw notFound('No such firewall rule.');
      const [rule] = checkAll([mergeUpdate(stored, body)], () => '');
      if (
        rule!.direction !== stored.direction &&
        (await store.countDirection(tx, m.resourceId, rule!.direction, stored.id)) >= MAX_RULES_PER_DIRECTION
      ) {
        throw ceiling(rule!.direction);
      }
      await store.updateRule(tx, m.resourceId, stored.id, rule!, ctx.clock.now());
      await store.markChanged(tx, m.resourceId);
      await audit(tx, ctx, auth, m, 'firewall.rule_updated', stored.id);
      return { status: 200 as const, body: toRule((await store.findRule(tx, m.resourceId, stored.id))!) };
    });
  },

  async firewallRuleDelete({ path, auth, ctx }) {
    await ctx.sql.begin(async (tx) => {
      const m = await firewallMachine(tx, path, auth, 'services.manage', true);
      if ((await store.deleteRules(tx, m.resourceId, path.rule_id)) === 0)
        throw notFound('No such firewall rule.');
      await store.markChanged(tx, m.resourceId);
      await audit(tx, ctx, auth, m, 'firewall.rule_deleted', path.rule_id);
    });
    return { status: 204 };
  },
};
