// A local unit's network (DECISIONS.md §8 "Confinement"): a network namespace of its own, kept by `ip
// netns` so the agent's programs and the gateway's shells all enter the same one, joined to the host by a
// veth pair. Inside: `lo`, and `eth0` holding the unit's address (/32) with one route, to UNIT_GATEWAY,
// which the host holds on its end of every pair; the host routes the unit's address to its end. So the
// edge, the ingress and the platform's RCON reach the unit at its address as before, and from inside
// neither the host's loopback (the API, gateway, DNS, PostgreSQL) nor another unit answers: the
// namespace's 127.0.0.1 is its own, the host drops what a unit sends to the host itself, and it forwards
// nothing from one unit to another or to a unit from outside (the guard below).
//
// Chosen over pasta (Debian's passt): as root, pasta drops to nobody and could not open another
// process's namespace; a veth pair is the kernel's own path (as LXD's and Podman's bridges use), costs a
// route per unit and no process, and leaves outgoing traffic to netfilter, where the edge's egress rules
// live. The namespace belongs to the host's user namespace, not the unit's: the unit's root can neither
// change its address or routes nor bypass the host's rules; the one setting it needs, binding ports below
// 1024 (a VPS's sshd on 22), is granted per namespace (ip_unprivileged_port_start).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { findProgram, searchPath } from '../programs.js';
import { UNIT_GATEWAY, unitNetnsName, unitNetnsPath, unitVethName } from './names.js';

/** Where local units' addresses come from (address.ts): RFC 6598 shared space, never routed publicly. */
export const UNIT_NETWORK = '100.64.0.0/10';
const GUARD_INPUT = 'SVC-UNIT-IN';
const GUARD_FORWARD = 'SVC-UNIT-FWD';
/** The edge's chain of egress rules (edge/egress.ts), entered from the guard for units' new connections. */
export const EGRESS_CHAIN = 'SVC-EGRESS';
/**
 * The edge's chain for flows its DNAT sends into a unit (edge/kernel-rules.ts): it holds them to the unit's
 * ingress rules and drops what no allocation of the unit accounts for.
 */
export const EDGE_FORWARD_CHAIN = 'SVC-EDGE-FWD';
const VETH_MATCH = 'svh+';

interface Result {
  code: number;
  stderr: string;
}

function run(file: string, args: string[], input?: string): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      env: { PATH: searchPath(), LANG: 'C' },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? 1, stderr }));
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
  });
}

async function must(file: string, args: string[], input?: string): Promise<void> {
  const result = await run(file, args, input);
  if (result.code !== 0)
    throw new Error(`${file} ${args.slice(0, 4).join(' ')} failed: ${result.stderr.trim().split('\n')[0]}`);
}

async function sysctl(path: string, value: string): Promise<void> {
  await writeFile(path, value).catch(() => undefined);
}

/** Makes (or repairs) the unit's namespace and veth pair with `address` on it; idempotent. */
export async function ensureUnitNetwork(unitId: string, address: string): Promise<void> {
  const ns = unitNetnsName(unitId);
  const veth = unitVethName(unitId);
  if (!existsSync(unitNetnsPath(unitId))) {
    const made = await run('ip', ['netns', 'add', ns]);
    if (made.code !== 0 && !existsSync(unitNetnsPath(unitId)))
      throw new Error(`ip netns add failed: ${made.stderr.trim()}`);
  }
  if (!existsSync(`/sys/class/net/${veth}`)) {
    // A namespace left from before (its host end went with a crash) may still hold an eth0.
    await run('ip', ['-n', ns, 'link', 'del', 'eth0']);
    await must('ip', ['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
  }
  // Neither end speaks IPv6: a link-local address would reach the host's services listening on [::].
  await sysctl(`/proc/sys/net/ipv6/conf/${veth}/disable_ipv6`, '1');
  // Strict reverse-path filtering: a unit cannot send as another's address.
  await sysctl(`/proc/sys/net/ipv4/conf/${veth}/rp_filter`, '1');
  // The edge's DNAT of a client on the host's loopback (edge/forward-kernel.ts): the unit's replies come
  // back on this veth addressed to 127.x once the DNAT is undone, which the kernel drops as martian unless
  // the interface may route loopback addresses. What a unit itself sends to 127.x still meets the guard
  // (SVC-UNIT-IN drops it unless it answers the host), and rp_filter drops a spoofed loopback source.
  await sysctl(`/proc/sys/net/ipv4/conf/${veth}/route_localnet`, '1');
  await must(
    'ip',
    ['-batch', '-'],
    [
      `link set ${veth} up`,
      `addr replace ${UNIT_GATEWAY}/32 dev ${veth} scope link`,
      `route replace ${address}/32 dev ${veth} src ${UNIT_GATEWAY}`,
    ].join('\n'),
  );
  await must(
    'ip',
    ['-n', ns, '-batch', '-'],
    [
      'link set lo up',
      `addr replace ${address}/32 dev eth0`,
      'link set eth0 up',
      `route replace ${UNIT_GATEWAY} dev eth0 scope link`,
      `route replace default via ${UNIT_GATEWAY} dev eth0`,
    ].join('\n'),
  );
  await must('nsenter', [
    `--net=${unitNetnsPath(unitId)}`,
    '/bin/sh',
    '-c',
    'echo 0 > /proc/sys/net/ipv4/ip_unprivileged_port_start && echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6 && echo "0 2147483647" > /proc/sys/net/ipv4/ping_group_range',
  ]);
}

/** Removes the unit's namespace (its veth pair and route go with it); what is absent is fine. */
export async function removeUnitNetwork(unitId: string): Promise<void> {
  if (existsSync(unitNetnsPath(unitId))) await run('ip', ['netns', 'del', unitNetnsName(unitId)]);
  if (existsSync(`/sys/class/net/${unitVethName(unitId)}`))
    await run('ip', ['link', 'del', unitVethName(unitId)]);
}

/** Whether this host can give units networks of their own: root, `ip`, `nsenter`, iptables. */
export function networkConfinable(): boolean {
  return (
    process.getuid?.() === 0 &&
    ['ip', 'nsenter', 'iptables', 'iptables-restore'].every((p) => findProgram(p, searchPath()) !== null)
  );
}

let guarded: Promise<void> | null = null;

/**
 * The host's rules for every unit's veth, made once per process (and checked, so a second process adds
 * nothing): what a unit sends to the host itself is dropped unless it answers the host; nothing is
 * forwarded from one unit to another, nor to a unit unless it answers or the edge's DNAT sends it (and
 * the edge's chain lets it through); a unit's new outgoing connections
 * meet the edge's egress rules, and what they let through leaves masqueraded as the host.
 */
export function ensureHostGuard(): Promise<void> {
  guarded ??= guard().catch((err: unknown) => {
    guarded = null;
    throw err;
  });
  return guarded;
}

async function guard(): Promise<void> {
  await sysctl('/proc/sys/net/ipv4/ip_forward', '1');
  // A unit's address that has no veth (its unit stopped) is unreachable at once, never sent on by the
  // default route to whatever answers there: each running unit's /32 is more specific than this.
  await must('ip', ['route', 'replace', 'unreachable', UNIT_NETWORK]);
  // Declaring a chain in a --noflush restore empties it, so the edge's chain is only made when missing.
  await run('iptables', ['-w', '-N', EGRESS_CHAIN]);
  await run('iptables', ['-w', '-N', EDGE_FORWARD_CHAIN]);
  const chains = [
    `*filter`,
    `:${GUARD_INPUT} - [0:0]`,
    `:${GUARD_FORWARD} - [0:0]`,
    `-F ${GUARD_INPUT}`,
    `-F ${GUARD_FORWARD}`,
    `-A ${GUARD_INPUT} -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT`,
    `-A ${GUARD_INPUT} -j DROP`,
    `-A ${GUARD_FORWARD} -i ${VETH_MATCH} -o ${VETH_MATCH} -j DROP`,
    // Before the established flows: the edge decides a forwarded UDP flow datagram by datagram.
    `-A ${GUARD_FORWARD} -o ${VETH_MATCH} -m conntrack --ctstate DNAT -j ${EDGE_FORWARD_CHAIN}`,
    `-A ${GUARD_FORWARD} -o ${VETH_MATCH} -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT`,
    `-A ${GUARD_FORWARD} -o ${VETH_MATCH} -j DROP`,
    `-A ${GUARD_FORWARD} -i ${VETH_MATCH} -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT`,
    `-A ${GUARD_FORWARD} -i ${VETH_MATCH} -j ${EGRESS_CHAIN}`,
    `-A ${GUARD_FORWARD} -i ${VETH_MATCH} -j ACCEPT`,
    'COMMIT',
    '',
  ].join('\n');
  await must('iptables-restore', ['-w', '--noflush'], chains);
  const jumps: string[][] = [
    ['INPUT', '-i', VETH_MATCH, '-j', GUARD_INPUT],
    ['FORWARD', '-i', VETH_MATCH, '-j', GUARD_FORWARD],
    ['FORWARD', '-o', VETH_MATCH, '-j', GUARD_FORWARD],
  ];
  for (const jump of jumps.reverse()) {
    if ((await run('iptables', ['-w', '-C', ...jump])).code !== 0)
      await must('iptables', ['-w', '-I', ...jump]);
  }
  const masquerade = ['POSTROUTING', '-s', UNIT_NETWORK, '!', '-o', VETH_MATCH, '-j', 'MASQUERADE'];
  if ((await run('iptables', ['-w', '-t', 'nat', '-C', ...masquerade])).code !== 0)
    await must('iptables', ['-w', '-t', 'nat', '-A', ...masquerade]);
}
