// The zones the platform's DNS server is authoritative for, built from one snapshot of PostgreSQL
// (store.ts), and the answer to one question (RFC 1034 §4.3.2, without delegations or aliases: the
// platform's zones hold neither). Pure functions: the server (server.ts) swaps a whole ZoneSet when the
// snapshot changes, so a question is answered from one consistent generation.
import type { DnsSnapshot } from './store.js';
import { gamePlatformName, webPlatformHost } from '../dns/platform-names.js';

export type Record =
  | { name: string; type: 'A'; ttl: number; address: string }
  | { name: string; type: 'NS'; ttl: number; ns: string }
  | { name: string; type: 'SRV'; ttl: number; priority: number; weight: number; port: number; target: string }
  | {
      name: string;
      type: 'SOA';
      ttl: number;
      primary: string;
      admin: string;
      serial: number;
      refresh: number;
      retry: number;
      expiration: number;
      minimum: number;
    };
export type RecordType = Record['type'];

interface Zone {
  apex: string;
  soa: Record & { type: 'SOA' };
  /** Records by owner name (lowercase, no trailing dot). */
  records: Map<string, Record[]>;
  /** Every name that exists: owners and the empty non-terminals above them (RFC 8020: NODATA there). */
  names: Set<string>;
}

export interface ZoneSet {
  generation: number;
  /** Apexes, longest first: a question belongs to the most specific zone it is within. */
  zones: Zone[];
}

/** Records live a minute: a change is served at once, and resolvers' caches forget it within a minute. */
export const TTL = 60;
/** The SOA's minimum, which is also the negative-caching TTL (RFC 2308 §5). */
const NEGATIVE_TTL = 30;
/** The SRV a block game publishes (`_minecraft._tcp.<name>`), read by the game's clients. */
export const GAME_SRV_PREFIX = '_minecraft._tcp.';

export interface ZoneOptions {
  platformDomain: string;
  /** The address web services' platform hosts point at (the edge's HTTP ingress), and the name server's. */
  ingressAddress: string;
}

const within = (name: string, zone: string) => name === zone || name.endsWith(`.${zone}`);

function newZone(apex: string, options: ZoneOptions, serial: number): Zone {
  const ns = `ns1.${options.platformDomain}`;
  const soa = {
    name: apex,
    type: 'SOA' as const,
    ttl: TTL,
    primary: ns,
    admin: `hostmaster.${options.platformDomain}`,
    // RFC 1982 serial arithmetic: the generation only grows, so the serial does too (mod 2^32).
    serial: serial % 2 ** 32,
    refresh: 3600,
    retry: 600,
    expiration: 604800,
    minimum: NEGATIVE_TTL,
  };
  const zone: Zone = { apex, soa, records: new Map(), names: new Set([apex]) };
  zone.records.set(apex, [soa, { name: apex, type: 'NS', ttl: TTL, ns }]);
  return zone;
}

function add(zone: Zone, record: Record): void {
  const list = zone.records.get(record.name);
  if (list) list.push(record);
  else zone.records.set(record.name, [record]);
  for (
    let name = record.name;
    name !== zone.apex && within(name, zone.apex);
    name = name.slice(name.indexOf('.') + 1)
  ) {
    zone.names.add(name);
  }
}

/** The zones of one snapshot: PLATFORM_DOMAIN and each parent domain. */
export function buildZones(snapshot: DnsSnapshot, options: ZoneOptions): ZoneSet {
  const platform = newZone(options.platformDomain, options, snapshot.generation);
  const ingress = options.ingressAddress;
  // The name server's own address, unless HOST is a wildcard (then it has no single address to give).
  if (ingress !== '0.0.0.0')
    add(platform, { name: `ns1.${options.platformDomain}`, type: 'A', ttl: TTL, address: ingress });
  for (const service of snapshot.gameServices) {
    const name = gamePlatformName(service.slug, service.id, options.platformDomain);
    add(platform, { name, type: 'A', ttl: TTL, address: service.address });
  }
  if (ingress !== '0.0.0.0') {
    for (const service of snapshot.webServices) {
      add(platform, {
        name: webPlatformHost(service.slug, service.id, options.platformDomain),
        type: 'A',
        ttl: TTL,
        address: ingress,
      });
    }
  }
  const zones = [platform];
  const byApex = new Map<string, Zone>();
  for (const parent of snapshot.parentDomains) {
    const zone = newZone(parent.name, options, snapshot.generation);
    zones.push(zone);
    byApex.set(parent.name, zone);
  }
  for (const sub of snapshot.gameSubdomains) {
    const zone = byApex.get(sub.parent);
    if (!zone) continue;
    const name = `${sub.subdomain}.${sub.parent}`;
    add(zone, { name, type: 'A', ttl: TTL, address: sub.recordIp });
    if (sub.hasSrv) {
      add(zone, {
        name: `${GAME_SRV_PREFIX}${name}`,
        type: 'SRV',
        ttl: TTL,
        priority: 0,
        weight: 5,
        port: sub.recordPort,
        target: name,
      });
    }
  }
  // A name on the HTTP ingress that is a single label under a parent domain (http-names.ts lets only
  // those through) is the platform's to answer: its A record points at the ingress.
  if (ingress !== '0.0.0.0') {
    for (const { hostname } of snapshot.httpNames) {
      const dot = hostname.indexOf('.');
      const zone = byApex.get(hostname.slice(dot + 1));
      if (zone && !zone.records.has(hostname)) add(zone, { name: hostname, type: 'A', ttl: TTL, address: ingress });
    }
  }
  zones.sort((a, b) => b.apex.length - a.apex.length);
  return { generation: snapshot.generation, zones };
}

export type Answer =
  | { rcode: 'REFUSED' }
  | { rcode: 'NOERROR' | 'NXDOMAIN'; answers: Record[]; authorities: Record[]; additionals: Record[] };

/**
 * The answer to `qtype` (a type name, or `ANY`) at `qname`: the records there (NOERROR), none of that
 * type at an existing name (NODATA: NOERROR with the SOA), no such name (NXDOMAIN with the SOA), or
 * REFUSED outside every zone (an authoritative-only server recurses for no one).
 */
export function answer(set: ZoneSet, qname: string, qtype: string): Answer {
  const name = qname.toLowerCase().replace(/\.$/, '');
  const zone = set.zones.find((z) => within(name, z.apex));
  if (!zone) return { rcode: 'REFUSED' };
  const records = (zone.records.get(name) ?? []).filter((r) => qtype === 'ANY' || r.type === qtype);
  if (records.length > 0) {
    // Glue for what the answer names: the A of an SRV's target or an NS host in our zones.
    const additionals: Record[] = [];
    for (const r of records) {
      const target = r.type === 'SRV' ? r.target : r.type === 'NS' ? r.ns : null;
      if (target === null) continue;
      const owner = set.zones.find((z) => within(target, z.apex));
      for (const extra of owner?.records.get(target) ?? []) if (extra.type === 'A') additionals.push(extra);
    }
    return { rcode: 'NOERROR', answers: records, authorities: [], additionals };
  }
  const soa = { ...zone.soa, ttl: NEGATIVE_TTL };
  return {
    rcode: zone.names.has(name) ? 'NOERROR' : 'NXDOMAIN',
    answers: [],
    authorities: [soa],
    additionals: [],
  };
}
