// A unit's egress rules as iptables rules of its chain (DECISIONS.md §6 "Network"): evaluated in order,
// the first that matches a new outgoing connection decides (allow: RETURN, out of the platform's chains;
// block: REJECT, so the program is refused at once rather than left to time out), and none matching
// allows (the chain ends). A rule matches on the destination: its cidr (none: any), the protocol (`any`:
// every one) and, for tcp and udp, the destination port range. Pure, so it is table-tested.
import { createHash } from 'node:crypto';

export interface EgressRule {
  action: 'allow' | 'block';
  protocol: 'tcp' | 'udp' | 'icmp' | 'any';
  cidr: string | null;
  port_from: number | null;
  port_to: number | null;
}

/** The chain jumped to from SVC-EGRESS for new connections of the unit's cgroup. */
export const EGRESS_CHAIN = 'SVC-EGRESS';

/** A unit's chain: a name of at most 28 characters (iptables' limit), the same in every edge. */
export function unitChain(unitId: string): string {
  return `SVCE-${createHash('sha256').update(unitId).digest('hex').slice(0, 20)}`;
}

/**
 * The `-A <chain> ...` argument lists of the unit's rules for IPv4 (4) or IPv6 (6). Rules are IPv4 (a
 * cidr is IPv4 only): an IPv6 connection matches no cidr rule, as at the edge's ingress, and `icmp`
 * means ICMPv6 there.
 */
export function chainRules(chain: string, rules: readonly EgressRule[], family: 4 | 6): string[][] {
  const lines: string[][] = [];
  for (const rule of rules) {
    if (rule.cidr !== null && family === 6) continue;
    const destination = rule.cidr === null ? [] : ['-d', rule.cidr];
    const ports =
      rule.port_from === null ? [] : ['--dport', `${rule.port_from}:${rule.port_to ?? rule.port_from}`];
    const protocol =
      rule.protocol === 'any' ? null : rule.protocol === 'icmp' && family === 6 ? 'ipv6-icmp' : rule.protocol;
    const match = [
      ...destination,
      ...(protocol ? ['-p', protocol] : []),
      ...(ports.length ? ['-m', protocol!, ...ports] : []),
    ];
    if (rule.action === 'allow') {
      lines.push(['-A', chain, ...match, '-j', 'RETURN']);
    } else if (protocol === 'tcp') {
      lines.push(['-A', chain, ...match, '-j', 'REJECT', '--reject-with', 'tcp-reset']);
    } else if (protocol === null) {
      // `any`: a tcp connection is reset, the rest answered port-unreachable.
      lines.push(['-A', chain, ...match, '-p', 'tcp', '-j', 'REJECT', '--reject-with', 'tcp-reset']);
      lines.push(['-A', chain, ...match, '-j', 'REJECT']);
    } else {
      lines.push(['-A', chain, ...match, '-j', 'REJECT']);
    }
  }
  return lines;
}

/** The iptables-restore input that replaces the chain's rules in one transaction. */
export function restoreScript(chain: string, lines: readonly string[][]): string {
  return ['*filter', `:${chain} - [0:0]`, `-F ${chain}`, ...lines.map((l) => l.join(' ')), 'COMMIT', ''].join(
    '\n',
  );
}
