// A VPS's firewall end to end (document 2 §4 "Firewall", DECISIONS.md §6 "Network"): the routes' rules
// (every refusal reading back that nothing changed), the per-direction ceiling against parallel requests,
// and enforcement by the real edge seen from two client addresses on the machine's SSH port, with the
// listing's enforcement field telling when a change has reached the edge: on each of the edge's
// forwarders (the user-space proxy, and the kernel's DNAT where this host allows it).
import net from 'node:net';
import type { components } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { networkConfinable } from '../../server/src/substrate/local/sandbox/network.js';
import { staffMember } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import {
  FORWARDERS,
  kernelForwardingHere,
  randomPortPool,
  startTestEdge,
  type TestEdge,
} from '../support/edge.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { outcome, refusal } from '../support/refusal.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

type RuleRequest = components['schemas']['FirewallRuleCreateRequest'];

let app: TestApp;
let smtp: TestSmtp;
let edge: TestEdge | null;
let owner: Caller;
let billing: Caller;
let stranger: Caller;
let orgId: string;
let vps: Provisioned;
let game: Provisioned;
let sshPort: number;
let sshAllocation: string;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', PORT_POOL: randomPortPool(10) },
  });
  edge = await startTestEdge(app);
  const staff = await staffMember(app, smtp, 'fw-staff', ['manage_services']);
  [owner, billing, stranger] = await Promise.all([
    signedIn(app, smtp, 'fw-owner'),
    signedIn(app, smtp, 'fw-billing'),
    signedIn(app, smtp, 'fw-stranger'),
  ]);
  orgId = (
    await owner.api.organizationCreate({ body: { name: 'Walls', slug: `walls-${Date.now().toString(36)}` } })
  ).id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: billing.userId, role: 'billing' } });
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Walls', slug: 'walls' } })
  ).id;
  [vps, game] = await Promise.all([
    provisionService(staff.elevated, { projectId, productSlug: 'vps-small', name: 'Box' }),
    provisionService(staff.elevated, { projectId, productSlug: 'block-game', name: 'Game' }),
  ]);
  const system = (await owner.api.externalAccessGet({ path: { id: vps.serviceInstanceId } })).allocations[0]!;
  [sshPort, sshAllocation] = [system.external_port, system.id];
}, 180_000);
afterAll(async () => {
  await edge?.stop();
  await app?.close();
  await smtp?.close();
});

const path = () => ({ id: vps.serviceInstanceId, resource_id: vps.primaryResourceId });
const list = (c: Caller = owner) => c.api.firewallRuleList({ path: path() });
const create = (body: RuleRequest, c: Caller = owner) => c.api.firewallRuleCreate({ path: path(), body });
const replace = (rules: RuleRequest[], c: Caller = owner) =>
  c.api.firewallRulesReplace({ path: path(), body: { rules } });
const rulesNow = async () => (await list()).rules;

const block22 = (cidr: string | null, priority = 100): RuleRequest => ({
  action: 'block',
  direction: 'ingress',
  protocol: 'tcp',
  priority,
  cidr,
  port_from: 22,
  port_to: 22,
});

/** What a client at `localAddress` sees on the VPS's public SSH port: the server's banner, or refused. */
function reach(localAddress: string): Promise<'ssh' | 'refused'> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: app.config.host, port: sshPort, localAddress });
    socket.setTimeout(5_000, () => {
      socket.destroy();
      resolve('refused');
    });
    socket.once('data', (d) => {
      socket.destroy();
      resolve(d.toString().startsWith('SSH-2.0-') ? 'ssh' : 'refused');
    });
    socket.once('error', () => resolve('refused'));
    socket.once('close', () => resolve('refused'));
  });
}

describe.each(FORWARDERS)('enforcement by the edge (%s)', (forwarding) => {
  const unavailable = forwarding === 'kernel' && !kernelForwardingHere();
  beforeAll(async () => {
    if (unavailable) return;
    await edge?.stop();
    edge = await startTestEdge(app, { forwarding });
  });

  it.skipIf(unavailable)(
    'blocks by source address, first match deciding, and reopens when the rule goes',
    async () => {
      await edge!.caughtUp();
      expect(await list()).toMatchObject({
        rules: [],
        max_rules_per_direction: 50,
        // Egress is held where the host can confine units (test/firewall/egress.test.ts).
        enforcement: { pending: false, egress_enforced: networkConfinable() },
      });
      // The machine's sshd answers once it has booted (it makes its host keys at its first boot).
      await expect.poll(() => reach('127.0.0.2'), { timeout: 20_000, interval: 250 }).toBe('ssh');
      expect([await reach('127.0.0.2'), await reach('127.0.0.3')]).toEqual(['ssh', 'ssh']);

      const rule = await create(block22('127.0.0.2'));
      expect(rule).toMatchObject({
        cidr: '127.0.0.2/32',
        direction: 'ingress',
        enabled: true,
        description: null,
      });
      await edge!.caughtUp();
      expect((await list()).enforcement).toMatchObject({ pending: false });
      expect([await reach('127.0.0.2'), await reach('127.0.0.3')]).toEqual(['refused', 'ssh']);

      // An allow before a broader block: the first match decides for each source.
      await replace([
        { action: 'allow', direction: 'ingress', protocol: 'any', priority: 1, cidr: '127.0.0.2/32' },
        block22('127.0.0.0/8', 5),
        // A block on another port, and egress rules, do not touch these connections.
        { ...block22(null, 0), port_from: 80, port_to: 80 },
        { action: 'block', direction: 'egress', protocol: 'any', priority: 0 },
      ]);
      await edge!.caughtUp();
      expect([await reach('127.0.0.2'), await reach('127.0.0.3')]).toEqual(['ssh', 'refused']);

      // Disabled, the block stops applying; deleted, likewise.
      const broad = (await rulesNow()).find((r) => r.cidr === '127.0.0.0/8')!;
      await owner.api.firewallRuleUpdate({
        path: { ...path(), rule_id: broad.id },
        body: { enabled: false },
      });
      await edge!.caughtUp();
      expect(await reach('127.0.0.3')).toBe('ssh');
      await owner.api.firewallRuleUpdate({ path: { ...path(), rule_id: broad.id }, body: { enabled: true } });
      await edge!.caughtUp();
      expect(await reach('127.0.0.3')).toBe('refused');
      await owner.api.firewallRuleDelete({ path: { ...path(), rule_id: broad.id } });
      await edge!.caughtUp();
      expect([await reach('127.0.0.2'), await reach('127.0.0.3')]).toEqual(['ssh', 'ssh']);
      // The forwarder asked for carried the connections, the other none.
      const traffic = (await edge!.edge.traffic()).get(sshAllocation)!;
      expect(traffic.path).toBe(forwarding);
      const [carried, other] =
        forwarding === 'kernel'
          ? [traffic.kernelFlows, traffic.proxyFlows]
          : [traffic.proxyFlows, traffic.kernelFlows];
      expect(carried).toBeGreaterThanOrEqual(2);
      expect(other).toBe(0);
      expect((await auditEntries(app, orgId)).map((e) => e.action)).toEqual(
        expect.arrayContaining([
          'firewall.rule_created',
          'firewall.rules_replaced',
          'firewall.rule_updated',
          'firewall.rule_deleted',
        ]),
      );
    },
  );

  it.skipIf(unavailable)('says pending while no edge has applied the newest change', async () => {
    await edge!.stop();
    edge = null;
    await create(block22('127.0.0.3'));
    const pending = await list();
    expect(pending.enforcement).toMatchObject({ pending: true, applied_generation: null });
    expect(pending.enforcement.generation).toBeGreaterThan(0);
    edge = await startTestEdge(app, { forwarding });
    await edge.caughtUp();
    const applied = (await list()).enforcement;
    expect(applied.pending).toBe(false);
    expect(applied.applied_generation).toBeGreaterThanOrEqual(applied.generation);
    expect([await reach('127.0.0.2'), await reach('127.0.0.3')]).toEqual(['ssh', 'refused']);
    await replace([]);
    expect(await rulesNow()).toEqual([]);
  });
});

describe('refusals change nothing', () => {
  it('refuses invalid rules with pointers, and a replace with one bad rule keeps the old set', async () => {
    await replace([
      block22('10.0.0.0/8'),
      { action: 'allow', direction: 'egress', protocol: 'icmp', priority: 3 },
    ]);
    const before = await rulesNow();
    expect(before.map((r) => [r.direction, r.priority])).toEqual([
      ['ingress', 100],
      ['egress', 3],
    ]);
    const bad: [string, RuleRequest, string[]][] = [
      [
        'tcp without ports',
        { action: 'allow', direction: 'ingress', protocol: 'tcp', priority: 1 },
        ['/port_from', '/port_to'],
      ],
      ['icmp with ports', { ...block22(null), protocol: 'icmp' }, ['/port_from', '/port_to']],
      ['cidr too broad', block22('10.0.0.0/7'), ['/cidr']],
      ['cidr IPv6', block22('::1/128'), ['/cidr']],
      ['ports reversed', { ...block22(null), port_from: 23, port_to: 22 }, ['/port_to']],
    ];
    for (const [, body, pointers] of bad) {
      const err = await refusal(create(body));
      expect([err.status, err.code]).toEqual([400, 'invalid-field-value']);
      expect(err.errors?.map((e) => e.pointer)).toEqual(pointers);
    }
    const err = await refusal(replace([block22(null), block22('300.0.0.0/8')]));
    expect(err.errors?.map((e) => e.pointer)).toEqual(['/rules/1/cidr']);
    expect(await rulesNow()).toEqual(before);

    // Update: null clears, the result is checked whole.
    const tcpRule = before.find((r) => r.protocol === 'tcp')!;
    const rulePath = { ...path(), rule_id: tcpRule.id };
    expect(
      await outcome(owner.api.firewallRuleUpdate({ path: rulePath, body: { port_from: null } })),
    ).toEqual([400, 'invalid-field-value']);
    expect(await rulesNow()).toEqual(before);
    const widened = await owner.api.firewallRuleUpdate({
      path: rulePath,
      body: { cidr: null, description: 'ssh' },
    });
    expect(widened).toMatchObject({ cidr: null, description: 'ssh', port_from: 22 });
    expect(
      await outcome(
        owner.api.firewallRuleUpdate({ path: { ...path(), rule_id: vps.volumeResourceId }, body: {} }),
      ),
    ).toEqual([404, 'not-found']);
    expect(
      await outcome(owner.api.firewallRuleDelete({ path: { ...path(), rule_id: vps.volumeResourceId } })),
    ).toEqual([404, 'not-found']);
  });

  it('is the 404 of an unknown id for a volume, a product without a firewall, outsiders and Billing writes', async () => {
    const before = await rulesNow();
    const volumePath = { id: vps.serviceInstanceId, resource_id: vps.volumeResourceId };
    expect(await outcome(owner.api.firewallRuleList({ path: volumePath }))).toEqual([404, 'not-found']);
    expect(
      await outcome(
        owner.api.firewallRuleList({
          path: { id: game.serviceInstanceId, resource_id: game.primaryResourceId },
        }),
      ),
    ).toEqual([404, 'not-found']);
    expect(await outcome(list(stranger))).toEqual([404, 'not-found']);
    expect((await list(billing)).rules).toHaveLength(before.length);
    expect(await outcome(create(block22(null), billing))).toEqual([404, 'not-found']);
    expect(await outcome(replace([], billing))).toEqual([404, 'not-found']);
    expect(await rulesNow()).toEqual(before);
  });
});

describe('the ceiling per direction', () => {
  it('counts directions apart and holds against parallel requests', async () => {
    const ingress = Array.from({ length: 49 }, (_, i) => block22(null, i));
    const egress = Array.from({ length: 50 }, (_, i) => ({
      ...block22(null, i),
      direction: 'egress' as const,
    }));
    await replace([...ingress, ...egress]);
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => outcome(create(block22(null, 500 + i)))),
    );
    expect(results.filter((r) => r === 'ok')).toHaveLength(1);
    expect(results.filter((r) => r !== 'ok')).toEqual(Array(4).fill([422, 'quota-exceeded']));
    const full = await rulesNow();
    expect(full.filter((r) => r.direction === 'ingress')).toHaveLength(50);

    const err = await refusal(create({ ...block22(null), direction: 'egress' }));
    expect([err.status, err.code, err.details]).toEqual([422, 'quota-exceeded', { limit: 50 }]);
    // Moving a rule into a full direction, and a replace over the ceiling, are refused too.
    const anEgress = full.find((r) => r.direction === 'egress')!;
    expect(
      await outcome(
        owner.api.firewallRuleUpdate({
          path: { ...path(), rule_id: anEgress.id },
          body: { direction: 'ingress' },
        }),
      ),
    ).toEqual([422, 'quota-exceeded']);
    expect(await outcome(replace(Array.from({ length: 51 }, (_, i) => block22(null, i))))).toEqual([
      422,
      'quota-exceeded',
    ]);
    expect(await rulesNow()).toEqual(full);
    // The listing is in evaluation order: ingress first, ascending priority.
    const key = (r: (typeof full)[number]) => (r.direction === 'ingress' ? 0 : 100_000) + r.priority;
    expect(full.map(key)).toEqual(full.map(key).sort((a, b) => a - b));
    expect(full[0]!.direction).toBe('ingress');
    expect(full.at(-1)!.direction).toBe('egress');
  });
});
