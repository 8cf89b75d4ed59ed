// Egress rules enforced on the local substrate (issue 21; DECISIONS.md §6 "Network", §8 "Confinement";
// edge/egress.ts): a real program in the VPS machine's shell (bash in the machine's confinement, as the
// gateway runs it) connects out through the host to two listeners of a remote host (a network namespace
// beyond this host's forwarding); the edge applies the machine's egress rules (first match in evaluation
// order; none matching allows) and the listing says when a change is in force. Ingress through the edge
// keeps working under a block of everything outgoing.
import net from 'node:net';
import type { components } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { networkConfinable } from '../../server/src/substrate/local/sandbox/network.js';
import { staffMember } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { randomPortPool, startTestEdge, type TestEdge } from '../support/edge.js';
import { signedIn, type Caller } from '../support/organizations.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startRemoteHost, type RemoteHost, type RemoteListener } from '../support/remote-host.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

type RuleRequest = components['schemas']['FirewallRuleCreateRequest'];

// The one reason to skip: the host cannot give units networks of their own (not root, or no iproute2 or
// iptables); the listing then says egress is not enforced (checked below either way).
const CAPABLE = networkConfinable();
const SKIP_WHY = 'egress enforcement needs root, iproute2, nsenter and iptables';

let app: TestApp;
let smtp: TestSmtp;
let edge: TestEdge;
let owner: Caller;
let vps: Provisioned;
let sshPort: number;
let remote: RemoteHost | null = null;
const listeners = (): RemoteListener[] => remote?.listeners ?? [];

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', PORT_POOL: randomPortPool(4) },
  });
  edge = await startTestEdge(app);
  const staff = await staffMember(app, smtp, 'eg-staff', ['manage_services']);
  owner = await signedIn(app, smtp, 'eg-owner');
  const orgId = (
    await owner.api.organizationCreate({
      body: { name: 'Egress', slug: `egress-${Date.now().toString(36)}` },
    })
  ).id;
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Egress', slug: 'egress' } })
  ).id;
  vps = await provisionService(staff.elevated, { projectId, productSlug: 'vps-small', name: 'Box' });
  sshPort = (await owner.api.externalAccessGet({ path: { id: vps.serviceInstanceId } })).allocations[0]!
    .external_port;
  if (CAPABLE) remote = await startRemoteHost(2);
}, 180_000);
afterAll(async () => {
  await remote?.stop();
  await edge?.stop();
  await app?.close();
  await smtp?.close();
});

const path = () => ({ id: vps.serviceInstanceId, resource_id: vps.primaryResourceId });
const list = () => owner.api.firewallRuleList({ path: path() });
const replace = (rules: RuleRequest[]) => owner.api.firewallRulesReplace({ path: path(), body: { rules } });
const egress = (rule: Omit<RuleRequest, 'direction'>): RuleRequest => ({ ...rule, direction: 'egress' });

/**
 * Runs bash in the machine's shell (the command the gateway runs for a shell ticket) and tries a TCP
 * connection to each listener from inside; answers what each attempt saw, and checks the listeners agree.
 */
async function reachFromMachine(): Promise<('connected' | 'refused')[]> {
  const shell = await app.substrate!.openShell(vps.primaryResourceId, ['bash'], { columns: 200, rows: 50 });
  if (!shell) throw new Error('the machine offers no bash shell');
  const before = listeners().map((l) => l.accepted);
  // One line: a PTY echoes what is typed, so the answers are spelled R""ESULT in the typed line and
  // only what the commands print reads RESULT.
  const script =
    listeners()
      .map(
        (l) =>
          `if (exec 3<>/dev/tcp/${l.address}/${l.port}) 2>/dev/null; then echo R""ESULT:connected; else echo R""ESULT:refused; fi`,
      )
      .join('; ') + '; exit 0\n';
  let out = '';
  shell.onData((d) => (out += d.toString()));
  const code = await new Promise<number>((resolve) => {
    shell.onExit(resolve);
    shell.write(Buffer.from(script));
  });
  expect(code).toBe(0);
  const seenAll = [...out.matchAll(/RESULT:(connected|refused)/g)].map((m) => m[1]);
  const seen = seenAll as ('connected' | 'refused')[];
  // What the listeners accepted matches what the program saw (a refusal never reached them).
  await expect
    .poll(() => listeners().map((l, i) => l.accepted - before[i]!))
    .toEqual(seen.map((s) => (s === 'connected' ? 1 : 0)));
  return seen;
}

/** The VPS's public SSH port through the edge: `ssh` for the machine's banner, else what happened. */
function sshBanner(): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: app.config.host, port: sshPort });
    socket.setTimeout(15_000, () => {
      socket.destroy();
      resolve('timed out');
    });
    socket.once('data', (d) => {
      socket.destroy();
      resolve(
        d.toString().startsWith('SSH-2.0-') ? 'ssh' : `answered ${JSON.stringify(d.toString().slice(0, 40))}`,
      );
    });
    socket.once('close', () => resolve('closed without a banner'));
    socket.once('error', (err) => resolve(`error ${(err as NodeJS.ErrnoException).code ?? err.message}`));
  });
}

describe('egress rules on the local substrate', () => {
  it('says whether egress is enforced, as the host allows', async () => {
    await edge.caughtUp();
    expect((await list()).enforcement).toMatchObject({ pending: false, egress_enforced: CAPABLE });
  });

  it.skipIf(!CAPABLE)(
    `blocks a machine's outgoing connections by rule, first match deciding (${SKIP_WHY})`,
    async () => {
      await edge.caughtUp();
      expect(await reachFromMachine()).toEqual(['connected', 'connected']);

      // A block on one listener's address and port: that one is refused, the other still connects.
      const [first, second] = listeners();
      await owner.api.firewallRuleCreate({
        path: path(),
        body: egress({
          action: 'block',
          protocol: 'tcp',
          priority: 10,
          cidr: `${first!.address}/32`,
          port_from: first!.port,
          port_to: first!.port,
        }),
      });
      await edge.caughtUp();
      expect((await list()).enforcement).toMatchObject({ pending: false, egress_enforced: true });
      expect(await reachFromMachine()).toEqual(['refused', 'connected']);

      // Evaluation order: an allow of one address before a broader block lets that one through only.
      await replace([
        egress({ action: 'block', protocol: 'any', priority: 5, cidr: remote!.network }),
        egress({
          action: 'allow',
          protocol: 'tcp',
          priority: 1,
          cidr: `${second!.address}/32`,
          port_from: 1,
          port_to: 65535,
        }),
        // An ingress block of everything does not touch outgoing connections.
        { action: 'block', direction: 'ingress', protocol: 'tcp', priority: 0, port_from: 1, port_to: 1 },
      ]);
      await edge.caughtUp();
      expect(await reachFromMachine()).toEqual(['refused', 'connected']);

      // The same rules with the priorities swapped: the block comes first and decides for both.
      const rules = (await list()).rules.filter((r) => r.direction === 'egress');
      const allow = rules.find((r) => r.action === 'allow')!;
      await owner.api.firewallRuleUpdate({ path: { ...path(), rule_id: allow.id }, body: { priority: 9 } });
      await edge.caughtUp();
      expect(await reachFromMachine()).toEqual(['refused', 'refused']);

      // A disabled rule stops applying.
      const block = rules.find((r) => r.action === 'block')!;
      await owner.api.firewallRuleUpdate({
        path: { ...path(), rule_id: block.id },
        body: { enabled: false },
      });
      await edge.caughtUp();
      expect(await reachFromMachine()).toEqual(['connected', 'connected']);

      // Everything outgoing blocked: the machine reaches nothing, yet its SSH server still answers through
      // the edge (replies belong to connections that came in).
      await replace([egress({ action: 'block', protocol: 'any', priority: 0 })]);
      await edge.caughtUp();
      expect(await reachFromMachine()).toEqual(['refused', 'refused']);
      expect(await sshBanner()).toBe('ssh');

      // Removing the rules restores it.
      await replace([]);
      await edge.caughtUp();
      expect((await list()).enforcement).toMatchObject({ pending: false });
      expect(await reachFromMachine()).toEqual(['connected', 'connected']);
    },
  );

  it.skipIf(!CAPABLE)(`keeps the rules in force across an edge restart (${SKIP_WHY})`, async () => {
    await replace([egress({ action: 'block', protocol: 'tcp', priority: 0, port_from: 1, port_to: 65535 })]);
    await edge.caughtUp();
    await edge.stop({ keepEgress: true });
    // No edge is live: the listing cannot say the rules are enforced, but the kernel still holds them.
    expect((await list()).enforcement).toMatchObject({ egress_enforced: false });
    expect(await reachFromMachine()).toEqual(['refused', 'refused']);
    // The next edge adopts the chains and removes them when the rules go.
    edge = await startTestEdge(app);
    await replace([]);
    await edge.caughtUp();
    expect(await reachFromMachine()).toEqual(['connected', 'connected']);
  });
});
