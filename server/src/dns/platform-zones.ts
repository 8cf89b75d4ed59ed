// Which DNS servers a check asks (DECISIONS.md §8 "Custom domains on the embedded default"): a name in a
// zone the platform serves (PLATFORM_DOMAIN and each parent domain) is asked of the platform's own DNS
// server, whatever DNS_SERVERS says, since the system's resolvers do not know a local zone such as
// play.test and the platform's server recurses for no one; every other name is asked of DNS_SERVERS (the
// system's resolvers when empty).
import type { Config } from '../config.js';
import type { Db } from '../db/client.js';

export interface ZoneRouting {
  /** Apexes of the platform's zones, longest first. */
  zones: string[];
  /** `IP:port` of the platform's DNS server; null when DNS_PORT is 0 (a port nobody else learns). */
  platform: string | null;
  /** DNS_SERVERS (empty: the system's resolvers). */
  configured: readonly string[];
}

const within = (name: string, apex: string) => name === apex || name.endsWith(`.${apex}`);

/** The platform DNS server's address as a resolver names it: a wildcard HOST is reached on loopback. */
export function platformDnsServer(config: Pick<Config, 'host' | 'dnsPort'>): string {
  const host = config.host === '0.0.0.0' ? '127.0.0.1' : config.host === '::' ? '::1' : config.host;
  return host.includes(':') ? `[${host}]:${config.dnsPort}` : `${host}:${config.dnsPort}`;
}

export async function zoneRouting(
  sql: Db,
  config: Pick<Config, 'host' | 'dnsPort' | 'dnsServers' | 'platformDomain'>,
): Promise<ZoneRouting> {
  const parents = await sql<{ name: string }[]>`select name from parent_domains`;
  const zones = [config.platformDomain, ...parents.map((p) => p.name.toLowerCase())].sort(
    (a, b) => b.length - a.length,
  );
  const platform = config.dnsPort === 0 ? null : platformDnsServer(config);
  return { zones, platform, configured: config.dnsServers };
}

/** The apex of the platform's zone `name` is in, or null. */
export function platformZoneOf(routing: ZoneRouting, name: string): string | null {
  const lower = name.toLowerCase().replace(/\.$/, '');
  return routing.zones.find((apex) => within(lower, apex)) ?? null;
}

/** The servers to ask about `name`: the platform's for its own zones, else the configured ones. */
export function serversFor(routing: ZoneRouting, name: string): readonly string[] {
  return routing.platform && platformZoneOf(routing, name) ? [routing.platform] : routing.configured;
}
