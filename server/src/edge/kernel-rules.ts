// The kernel path's rules for one unit (docs/substrate.md "The edge's kernel path"), pure so they are
// table-tested. Three chains per unit and edge address, each replaced whole in one iptables-restore:
//
// - nat `SVCD-…`: one DNAT per allocation, HOST:external_port to the unit's address and internal port.
//   Entered from SVC-EDGE-DNAT, which PREROUTING (remote clients) and OUTPUT (clients on this host) send
//   every packet for a local address to; nat sees only a flow's first packet.
// - filter `SVCI-…`: the allocations again, matched on the flow's original destination (conntrack) and its
//   current one, so a datagram of a UDP flow whose allocation went, or was moved, meets no rule and is
//   dropped at the end of SVC-EDGE-FWD. Entered from SVC-EDGE-UNITS by the unit's address.
// - filter `SVCF-…`: the unit's ingress rules (firewall.ts) in evaluation order, then ACCEPT: evaluated in
//   FORWARD and OUTPUT, before POSTROUTING rewrites a loopback client's source, so a rule sees the
//   client's own address, and after the DNAT, so a rule's ports are the unit's, as at the proxy.
import { createHash } from 'node:crypto';
import { EDGE_FORWARD_CHAIN } from '../substrate/local/sandbox/network.js';
import type { CompiledRule } from './firewall.js';

/** nat: PREROUTING and OUTPUT jump here for packets to a local address; it jumps to each unit's DNAT chain. */
export const DNAT_CHAIN = 'SVC-EDGE-DNAT';
/** filter: the guard (SVC-UNIT-FWD) and OUTPUT jump here for flows a DNAT sends into a unit's network. */
export const FORWARD_CHAIN = EDGE_FORWARD_CHAIN;
/** filter: each unit's jump to its allocations' chain, shared by every edge on the host. */
export const UNITS_CHAIN = 'SVC-EDGE-UNITS';

export interface KernelPort {
  /** The allocation's id (named in its DNAT rule's comment, which its counters are read by). */
  id: string;
  protocol: 'tcp' | 'udp';
  externalPort: number;
  targetPort: number;
}

export interface KernelUnit {
  unitId: string;
  /** The unit's address (in 100.64.0.0/10, routed to its veth). */
  address: string;
  ports: KernelPort[];
  /** Its enabled ingress rules in evaluation order. */
  rules: CompiledRule[];
}

export interface UnitChains {
  dnat: string;
  allocations: string;
  firewall: string;
}

/**
 * The unit's chains on this edge's address: names of 25 characters (iptables allows 28), distinct per
 * address so two edges of one machine (one per public address) never write each other's.
 */
export function unitChains(host: string, unitId: string): UnitChains {
  const digest = createHash('sha256').update(`${host} ${unitId}`).digest('hex').slice(0, 20);
  return { dnat: `SVCD-${digest}`, allocations: `SVCI-${digest}`, firewall: `SVCF-${digest}` };
}

/** The comment on the unit's jumps, by which an edge finds the units it left rules for. */
export const unitTag = (host: string, unitId: string) => `svc-edge:${host}:${unitId}`;

/** HOST `0.0.0.0` binds every address of the machine: the DNAT then matches any local destination. */
const anyAddress = (host: string) => host === '0.0.0.0';

function dottedQuad(value: number): string {
  return [24, 16, 8, 0].map((shift) => (value >>> shift) & 255).join('.');
}

function prefixLength(mask: number): number {
  let bits = 0;
  for (let m = mask >>> 0; m !== 0; m = (m << 1) >>> 0) bits += 1;
  return bits;
}

/**
 * The ingress rules as the firewall chain's lines. `icmp` never matches what the edge forwards, so it has
 * no line; `any` is a line per forwarded protocol. A block resets a TCP connection (the proxy resets it
 * too) and drops a datagram.
 */
export function firewallLines(chain: string, rules: readonly CompiledRule[]): string[][] {
  const lines: string[][] = [];
  for (const rule of rules) {
    if (rule.protocol === 'icmp') continue;
    const source = rule.mask === 0 ? [] : ['-s', `${dottedQuad(rule.network)}/${prefixLength(rule.mask)}`];
    const everyPort = rule.portFrom <= 1 && rule.portTo >= 65535;
    const ports = everyPort
      ? []
      : ['--dport', rule.portFrom === rule.portTo ? `${rule.portFrom}` : `${rule.portFrom}:${rule.portTo}`];
    for (const protocol of rule.protocol === 'any' ? (['tcp', 'udp'] as const) : [rule.protocol]) {
      const verdict =
        rule.action === 'allow'
          ? ['-j', 'ACCEPT']
          : protocol === 'tcp'
            ? ['-j', 'REJECT', '--reject-with', 'tcp-reset']
            : ['-j', 'DROP'];
      lines.push([
        '-A',
        chain,
        ...source,
        '-p',
        protocol,
        ...(ports.length ? ['-m', protocol, ...ports] : []),
        ...verdict,
      ]);
    }
  }
  // No rule matching allows (DECISIONS.md §6 "Network").
  lines.push(['-A', chain, '-j', 'ACCEPT']);
  return lines;
}

/** Each allocation's flows (by original and current destination) to the firewall chain. */
export function allocationLines(host: string, unit: KernelUnit, chains: UnitChains): string[][] {
  return unit.ports.map((port) => [
    '-A',
    chains.allocations,
    '-d',
    `${unit.address}/32`,
    '-p',
    port.protocol,
    '-m',
    port.protocol,
    '--dport',
    `${port.targetPort}`,
    '-m',
    'conntrack',
    ...(anyAddress(host) ? [] : ['--ctorigdst', `${host}/32`]),
    '--ctorigdstport',
    `${port.externalPort}`,
    '-j',
    chains.firewall,
  ]);
}

export function dnatLines(host: string, unit: KernelUnit, chains: UnitChains): string[][] {
  return unit.ports.map((port) => [
    '-A',
    chains.dnat,
    ...(anyAddress(host) ? ['-m', 'addrtype', '--dst-type', 'LOCAL'] : ['-d', `${host}/32`]),
    '-p',
    port.protocol,
    '-m',
    port.protocol,
    '--dport',
    `${port.externalPort}`,
    '-m',
    'comment',
    '--comment',
    `allocation:${port.id}`,
    '-j',
    'DNAT',
    '--to-destination',
    `${unit.address}:${port.targetPort}`,
  ]);
}

const quote = (arg: string) => (/^[\w.:/,@+=-]+$/.test(arg) ? arg : `"${arg.replace(/["\\]/g, '\\$&')}"`);
const restoreLine = (args: readonly string[]) => args.map(quote).join(' ');

/** The iptables-restore input that replaces the unit's two filter chains in one commit. */
export function unitFilterScript(host: string, unit: KernelUnit): string {
  const chains = unitChains(host, unit.unitId);
  return [
    '*filter',
    `:${chains.firewall} - [0:0]`,
    `:${chains.allocations} - [0:0]`,
    `-F ${chains.firewall}`,
    `-F ${chains.allocations}`,
    ...firewallLines(chains.firewall, unit.rules).map(restoreLine),
    ...allocationLines(host, unit, chains).map(restoreLine),
    'COMMIT',
    '',
  ].join('\n');
}

/** The iptables-restore input that replaces the unit's DNAT chain (and so its flow counters). */
export function unitNatScript(host: string, unit: KernelUnit): string {
  const chains = unitChains(host, unit.unitId);
  return [
    '*nat',
    `:${chains.dnat} - [0:0]`,
    `-F ${chains.dnat}`,
    ...dnatLines(host, unit, chains).map(restoreLine),
    'COMMIT',
    '',
  ].join('\n');
}

/**
 * The unit's three chains replaced: the filter table first, so a flow the new DNAT sends meets the new
 * firewall. Each table is committed whole (a packet meets the old chain or the new one, never a mix).
 */
export const unitRestoreScript = (host: string, unit: KernelUnit) =>
  unitFilterScript(host, unit) + unitNatScript(host, unit);

/** The unit's jump from SVC-EDGE-UNITS (filter), by its address: the other units' flows pass it by. */
export const allocationsJump = (host: string, unit: { unitId: string; address: string }) => [
  UNITS_CHAIN,
  '-d',
  `${unit.address}/32`,
  '-m',
  'comment',
  '--comment',
  unitTag(host, unit.unitId),
  '-j',
  unitChains(host, unit.unitId).allocations,
];

/** The unit's jump from SVC-EDGE-DNAT (nat). */
export const dnatJump = (host: string, unitId: string) => [
  DNAT_CHAIN,
  '-m',
  'comment',
  '--comment',
  unitTag(host, unitId),
  '-j',
  unitChains(host, unitId).dnat,
];
