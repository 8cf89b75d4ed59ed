// What a name must show before the platform asks for its certificate (issue 23: "a preflight the
// anchors lack"): it resolves to the HTTP ingress, and its CAA records (RFC 8659) allow our CA. Names in
// the platform's own zones are asked of the platform's DNS, others of DNS_SERVERS (../dns/platform-zones.ts).
// A failing finding is a sentence for `status_reason`, so `pending` says why it waits.
import { Resolver } from 'node:dns/promises';
import type { Config } from '../config.js';
import { platformZoneOf, serversFor, type ZoneRouting } from '../dns/platform-zones.js';

export type Preflight = { ok: true } | { ok: false; reason: string };

const NO_DATA = new Set(['ENODATA', 'ENOTFOUND', 'NXDOMAIN']);

type Dns = Pick<Config, 'dnsTimeoutMs'>;

function resolverOf(config: Dns, servers: readonly string[]): Resolver {
  const resolver = new Resolver({ timeout: Math.max(25, Math.floor(config.dnsTimeoutMs / 3)), tries: 2 });
  if (servers.length > 0) resolver.setServers([...servers]);
  return resolver;
}

async function orNone<T>(lookup: Promise<T[]>): Promise<T[]> {
  try {
    return await lookup;
  } catch (error) {
    if (NO_DATA.has((error as NodeJS.ErrnoException).code ?? '')) return [];
    throw error;
  }
}

const describe = (error: unknown) =>
  `the DNS servers did not answer (${(error as NodeJS.ErrnoException).code ?? 'error'})`;

/** The addresses `hostname` resolves to must all be the ingress's (`ingressAddresses`), and there must be one. */
export async function checkResolvesToIngress(
  config: Dns,
  routing: ZoneRouting,
  hostname: string,
  ingressAddresses: readonly string[],
): Promise<Preflight> {
  const resolver = resolverOf(config, serversFor(routing, hostname));
  let addresses: string[];
  try {
    addresses = [
      ...(await orNone(resolver.resolve4(hostname))),
      ...(await orNone(resolver.resolve6(hostname))),
    ];
  } catch (error) {
    return { ok: false, reason: `${hostname} could not be looked up: ${describe(error)}.` };
  }
  const want = ingressAddresses.join(', ');
  if (addresses.length === 0) {
    return {
      ok: false,
      reason: `${hostname} does not resolve; point it at ${want} (A record) or CNAME it to the platform host.`,
    };
  }
  const stray = addresses.filter((a) => !ingressAddresses.includes(a));
  if (stray.length > 0) {
    return {
      ok: false,
      reason: `${hostname} resolves to ${stray.join(', ')}, not to the ingress (${want}).`,
    };
  }
  return { ok: true };
}

interface CaaRecord {
  critical: number;
  issue?: string;
  issuewild?: string;
  iodef?: string;
  [tag: string]: unknown;
}

/**
 * RFC 8659 §3: the CAA set of the closest name at or above `hostname` that has one. Within a platform
 * zone the platform's DNS answers, up to its apex; above it the configured resolvers, whose refusal (an
 * authoritative server asked about a name outside its zones, as the platform's own is when DNS_SERVERS
 * names it) counts as no CAA only when `hostname` is in a platform zone: the platform vouches for those.
 */
async function relevantCaa(config: Dns, routing: ZoneRouting, hostname: string): Promise<CaaRecord[]> {
  const ours = platformZoneOf(routing, hostname) !== null;
  const resolvers = new Map<string, Resolver>();
  const labels = hostname.split('.');
  for (let i = 0; i < labels.length; i += 1) {
    const name = labels.slice(i).join('.');
    const servers = serversFor(routing, name);
    const key = servers.join(',');
    if (!resolvers.has(key)) resolvers.set(key, resolverOf(config, servers));
    let records: CaaRecord[];
    try {
      records = (await orNone(resolvers.get(key)!.resolveCaa(name))) as CaaRecord[];
    } catch (error) {
      if (ours && (error as NodeJS.ErrnoException).code === 'EREFUSED') continue;
      throw error;
    }
    if (records.length > 0) return records;
  }
  return [];
}

/**
 * Whether CAA lets a CA of `identities` (issuer domains) issue for `hostname` (not a wildcard): no CAA
 * set, or a set without `issue` properties, allows any CA; else one `issue` value must name ours. An
 * unknown tag marked critical forbids issuance (RFC 8659 §4.1); a lookup that fails is not a yes.
 */
export async function checkCaa(
  config: Dns,
  routing: ZoneRouting,
  hostname: string,
  identities: readonly string[],
): Promise<Preflight> {
  let records: CaaRecord[];
  try {
    records = await relevantCaa(config, routing, hostname);
  } catch (error) {
    return { ok: false, reason: `The CAA records of ${hostname} could not be read: ${describe(error)}.` };
  }
  const known = new Set(['critical', 'issue', 'issuewild', 'iodef']);
  if (records.some((r) => (r.critical & 128) !== 0 && Object.keys(r).some((k) => !known.has(k)))) {
    return {
      ok: false,
      reason: `A CAA record of ${hostname} carries a critical property this CA does not understand.`,
    };
  }
  const issue = records
    .filter((r) => typeof r.issue === 'string')
    .map((r) => r.issue!.split(';')[0]!.trim().toLowerCase());
  if (issue.length === 0) return { ok: true };
  if (issue.some((domain) => domain !== '' && identities.includes(domain))) return { ok: true };
  const ours = identities.length > 0 ? identities.join(' or ') : 'the platform’s CA';
  return {
    ok: false,
    reason: `The CAA records of ${hostname} do not allow ${ours} to issue for it (they allow: ${issue.filter(Boolean).join(', ') || 'no CA'}).`,
  };
}
