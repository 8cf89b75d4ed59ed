// The edge's kernel path (docs/substrate.md "The edge's kernel path"): where the edge may program
// netfilter (root, iptables) and a unit has a network of its own (sandbox/network.ts), its allocations are
// DNATed into the unit's namespace, as Docker (userland-proxy=false) and LXD port mappings do, and no byte
// crosses this process. The rules of each unit are kernel-rules.ts's; this module keeps the host's shared
// chains and jumps, writes a unit's chains when what it should forward or its ingress rules change, and
// removes them when the unit has no allocation left on this edge or the edge stops.
//
// Several edges may share the host (one per database in the tests, one per public address on a node):
// each touches only chains named for its own address, of units of its own database. An edge that starts
// adopts what a previous one on its address left (found by the comment on the jumps) and rewrites or
// removes it on its first apply, so a crash leaves nothing behind for long and a restart opens nothing.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import { ensureHostGuard, networkConfinable, UNIT_NETWORK } from '../substrate/local/sandbox/network.js';
import { UNIT_GATEWAY, unitVethName } from '../substrate/local/sandbox/names.js';
import { ipv4ToInt } from './firewall.js';
import { must, run, splitRule } from './iptables.js';
import {
  allocationsJump,
  DNAT_CHAIN,
  dnatJump,
  FORWARD_CHAIN,
  unitChains,
  unitFilterScript,
  unitNatScript,
  unitTag,
  UNITS_CHAIN,
  type KernelUnit,
} from './kernel-rules.js';

export interface KernelForwarder {
  /** Makes the kernel forward exactly `units` on this edge's address; throws when it could not. */
  apply(units: readonly KernelUnit[]): Promise<void>;
  /** Per allocation, the flows its DNAT has sent (nat sees only a flow's first packet: one per flow). */
  flows(): Promise<Map<string, number>>;
  /** Removes every rule of this edge's address for its units. */
  release(): Promise<void>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const [NETWORK, PREFIX] = UNIT_NETWORK.split('/') as [string, string];
const NETWORK_MASK = (0xffffffff << (32 - Number(PREFIX))) >>> 0;

/** Why this edge cannot forward through the kernel (null: it can). */
export function kernelForwardingProblem(host: string): string | null {
  if (!networkConfinable()) return 'needs root, iproute2, nsenter and iptables';
  // Units have IPv4 addresses only; an IPv6 or named HOST is left to the proxy.
  if (!net.isIPv4(host)) return `HOST ${host} is not an IPv4 address`;
  return null;
}

/**
 * Whether a unit at `address` has a network namespace the kernel can DNAT into: a local unit's address
 * (100.64.0.0/10). An LXD unit's (127.64.0.0/10) is a proxy device's listener on the member's loopback.
 */
export function inUnitNetwork(address: string): boolean {
  const value = ipv4ToInt(address);
  return value !== null && (value & NETWORK_MASK) >>> 0 === ipv4ToInt(NETWORK);
}

const tables = (table: 'filter' | 'nat') => (table === 'nat' ? ['-t', 'nat'] : []);

async function ensureRule(
  table: 'filter' | 'nat',
  rule: string[],
  position: 'first' | 'last',
): Promise<void> {
  if ((await run('iptables', ['-w', ...tables(table), '-C', ...rule])).code === 0) return;
  const [chain, ...spec] = rule as [string, ...string[]];
  await must('iptables', [
    '-w',
    ...tables(table),
    ...(position === 'first' ? ['-I', chain, '1'] : ['-A', chain]),
    ...spec,
  ]);
}

/**
 * The chains every edge on the host shares, and their jumps: checked, so a second edge adds nothing.
 * SVC-EDGE-FWD lets a forwarded TCP connection's later packets through at once (its firewall decided at
 * its first one), sends the rest to the units' chains, and drops what no allocation accounts for.
 */
async function prepare(): Promise<void> {
  await ensureHostGuard();
  await run('iptables', ['-w', '-N', UNITS_CHAIN]);
  await run('iptables', ['-w', '-t', 'nat', '-N', DNAT_CHAIN]);
  await must(
    'iptables-restore',
    ['-w', '--noflush'],
    [
      '*filter',
      `:${FORWARD_CHAIN} - [0:0]`,
      `-F ${FORWARD_CHAIN}`,
      `-A ${FORWARD_CHAIN} -m conntrack --ctstate RELATED -j ACCEPT`,
      `-A ${FORWARD_CHAIN} -p tcp -m conntrack --ctstate ESTABLISHED -j ACCEPT`,
      `-A ${FORWARD_CHAIN} -j ${UNITS_CHAIN}`,
      `-A ${FORWARD_CHAIN} -j DROP`,
      'COMMIT',
      '',
    ].join('\n'),
  );
  // A flow from this host never passes FORWARD; OUTPUT's `-o` is the interface before the DNAT rerouted
  // it (lo), so the flow is told by its new destination.
  await ensureRule(
    'filter',
    ['OUTPUT', '-d', UNIT_NETWORK, '-m', 'conntrack', '--ctstate', 'DNAT', '-j', FORWARD_CHAIN],
    'first',
  );
  for (const chain of ['PREROUTING', 'OUTPUT'])
    await ensureRule('nat', [chain, '-m', 'addrtype', '--dst-type', 'LOCAL', '-j', DNAT_CHAIN], 'first');
  // A client on the host's loopback would reach the unit as 127.x, which is the unit's own loopback
  // there: it is seen as the host's side of the unit's veth, as the proxy's connections are. MASQUERADE
  // would pick the host's first global address instead (169.254.1.1 is link-scoped).
  await ensureRule(
    'nat',
    [
      'POSTROUTING',
      '-s',
      '127.0.0.0/8',
      '-d',
      UNIT_NETWORK,
      '-m',
      'conntrack',
      '--ctstate',
      'DNAT',
      '-j',
      'SNAT',
      '--to-source',
      UNIT_GATEWAY,
    ],
    'first',
  );
}

/** The rules (as `-S` prints them, split) in `chain` tagged for a unit of `host`, by unit. */
async function taggedRules(
  table: 'filter' | 'nat',
  chain: string,
  host: string,
): Promise<Map<string, string[][]>> {
  const out = await run('iptables', ['-w', ...tables(table), '-S', chain]);
  const prefix = unitTag(host, '');
  const byUnit = new Map<string, string[][]>();
  for (const line of out.stdout.split('\n')) {
    if (!line.startsWith('-A ')) continue;
    const args = splitRule(line).slice(1);
    const tag = args[args.indexOf('--comment') + 1];
    if (!tag?.startsWith(prefix)) continue;
    const unitId = tag.slice(prefix.length);
    if (UUID.test(unitId)) byUnit.set(unitId, [...(byUnit.get(unitId) ?? []), args]);
  }
  return byUnit;
}

async function routeLoopbackReplies(unitId: string): Promise<void> {
  // Set where the unit's network is made (network.ts); again here for a veth made before that was.
  const path = `/proc/sys/net/ipv4/conf/${unitVethName(unitId)}/route_localnet`;
  if (existsSync(path)) await writeFile(path, '1').catch(() => undefined);
}

async function remove(host: string, unitId: string): Promise<void> {
  const chains = unitChains(host, unitId);
  // The DNAT goes first, so no new flow is sent in while the unit's filter chains go.
  for (const args of (await taggedRules('nat', DNAT_CHAIN, host)).get(unitId) ?? [])
    await run('iptables', ['-w', '-t', 'nat', '-D', ...args]);
  await run('iptables', ['-w', '-t', 'nat', '-F', chains.dnat]);
  await run('iptables', ['-w', '-t', 'nat', '-X', chains.dnat]);
  for (const args of (await taggedRules('filter', UNITS_CHAIN, host)).get(unitId) ?? [])
    await run('iptables', ['-w', '-D', ...args]);
  for (const chain of [chains.allocations, chains.firewall]) await run('iptables', ['-w', '-F', chain]);
  for (const chain of [chains.allocations, chains.firewall]) await run('iptables', ['-w', '-X', chain]);
}

/**
 * The kernel forwarder of this edge's address; `ours` tells which of the unit ids found on the host are
 * of this edge's database (the others are another edge's).
 */
export async function startKernelForwarding(
  host: string,
  ours: (unitIds: string[]) => Promise<Set<string>>,
): Promise<KernelForwarder> {
  const problem = kernelForwardingProblem(host);
  if (problem) throw new Error(`the edge cannot forward through the kernel: ${problem}`);
  await prepare();
  // What each unit's chains hold now and the address its jump matches; adopted units start unknown, so
  // the first apply rewrites or removes them.
  const applied = new Map<string, { filter: string; nat: string; address: string | null }>();
  const found = new Set([
    ...(await taggedRules('nat', DNAT_CHAIN, host)).keys(),
    ...(await taggedRules('filter', UNITS_CHAIN, host)).keys(),
  ]);
  for (const unitId of await ours([...found])) applied.set(unitId, { filter: '', nat: '', address: null });

  return {
    async apply(units) {
      const wanted = new Set(units.map((u) => u.unitId));
      for (const unitId of [...applied.keys()]) {
        if (wanted.has(unitId)) continue;
        await remove(host, unitId);
        applied.delete(unitId);
      }
      for (const unit of units) {
        await routeLoopbackReplies(unit.unitId);
        const filter = unitFilterScript(host, unit);
        const nat = unitNatScript(host, unit);
        const was = applied.get(unit.unitId);
        if (was?.filter === filter && was.nat === nat && was.address === unit.address) continue;
        // A table left as it was keeps its counters (a rule change does not zero the allocations' flows).
        const script = (was?.filter === filter ? '' : filter) + (was?.nat === nat ? '' : nat);
        if (script) await must('iptables-restore', ['-w', '--noflush'], script);
        // The firewall's jump before the DNAT's, so no flow is sent in before its rules are reachable;
        // a jump for an address the unit no longer has goes once the new one is in.
        const jump = allocationsJump(host, unit);
        await ensureRule('filter', jump, 'last');
        for (const args of (await taggedRules('filter', UNITS_CHAIN, host)).get(unit.unitId) ?? [])
          if (!args.includes(`${unit.address}/32`)) await run('iptables', ['-w', '-D', ...args]);
        await ensureRule('nat', dnatJump(host, unit.unitId), 'last');
        applied.set(unit.unitId, { filter, nat, address: unit.address });
      }
    },
    async flows() {
      const out = await run('iptables-save', ['-c', '-t', 'nat']);
      const ownChains = new Set([...applied.keys()].map((id) => unitChains(host, id).dnat));
      const flows = new Map<string, number>();
      for (const match of out.stdout.matchAll(
        /^\[(\d+):\d+\] -A (\S+) .*--comment "?allocation:([0-9a-f-]+)"?/gm,
      ))
        if (ownChains.has(match[2]!)) flows.set(match[3]!, Number(match[1]));
      return flows;
    },
    async release() {
      for (const unitId of [...applied.keys()]) {
        await remove(host, unitId);
        applied.delete(unitId);
      }
    },
  };
}
