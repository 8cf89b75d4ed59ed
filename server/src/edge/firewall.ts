// Ingress enforcement at the edge (DECISIONS.md §6 "Network"): the unit's enabled ingress rules in
// evaluation order (ascending priority); the first that matches the connection decides, and none
// matching allows. A rule matches on the source address (its cidr; none: any source), the protocol (or
// `any`; `icmp` never matches what the edge forwards) and the destination port, the unit's port the
// traffic is for (its port range; none: every port). Compiled once per reconcile, so a connection costs
// a few integer comparisons per rule.

export interface CompiledRule {
  action: 'allow' | 'block';
  protocol: 'tcp' | 'udp' | 'icmp' | 'any';
  /** The cidr's network and mask as unsigned 32-bit integers (mask 0: any source). */
  network: number;
  mask: number;
  portFrom: number;
  portTo: number;
}

/** Per unit (resource id), its enabled ingress rules in evaluation order. */
export type IngressRules = Map<string, CompiledRule[]>;

export function ipv4ToInt(address: string): number | null {
  const parts = address.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    value = value * 256 + n;
  }
  return value >>> 0;
}

export function compileRule(rule: {
  action: 'allow' | 'block';
  protocol: 'tcp' | 'udp' | 'icmp' | 'any';
  cidr: string | null;
  port_from: number | null;
  port_to: number | null;
}): CompiledRule {
  let network = 0;
  let mask = 0;
  if (rule.cidr) {
    const [address, bits] = rule.cidr.split('/');
    const prefix = Number(bits ?? 32);
    mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
    network = ((ipv4ToInt(address ?? '') ?? 0) & mask) >>> 0;
  }
  return {
    action: rule.action,
    protocol: rule.protocol,
    network,
    mask,
    portFrom: rule.port_from ?? 1,
    portTo: rule.port_to ?? 65535,
  };
}

export function admits(
  rules: CompiledRule[] | undefined,
  protocol: 'tcp' | 'udp',
  remoteAddress: string,
  _remotePort: number,
  port: number,
): boolean {
  if (!rules || rules.length === 0) return true;
  const source = ipv4ToInt(remoteAddress);
  for (const rule of rules) {
    if (rule.protocol !== 'any' && rule.protocol !== protocol) continue;
    if (port < rule.portFrom || port > rule.portTo) continue;
    if (rule.mask !== 0) {
      // A source that is not IPv4 matches no cidr rule.
      if (source === null || (source & rule.mask) >>> 0 !== rule.network) continue;
    }
    return rule.action === 'allow';
  }
  return true;
}
