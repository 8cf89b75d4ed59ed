// TXT lookups against live DNS for domain proofs (DECISIONS.md §5 `DNS_SERVERS`), with one deadline
// for the whole lookup and CNAMEs followed here, hop by hop, so the answer does not depend on whether
// the servers chase aliases themselves (a recursive resolver does; an authoritative server answering
// for a target outside its zones does not).
//
// Each lookup gets a resolver of its own: c-ares keeps a query cache per channel (since 1.23), and a
// recheck must see a withdrawn record as withdrawn, not as it was a TTL ago.
import { Resolver } from 'node:dns/promises';

export interface DnsOptions {
  /** `IP[:port]` entries; empty: the system's resolvers. */
  servers: readonly string[];
  /** The deadline of the whole lookup (every try, every server, every CNAME hop). */
  timeoutMs: number;
}

/** RFC 1034 §5.2.2 wants chains followed but bounded; eight aliases is far past any sane setup. */
export const MAX_CNAME_HOPS = 8;

export type TxtFailure =
  | 'timeout' // no server answered before the deadline
  | 'server-failure' // SERVFAIL: the servers could not resolve it (DNSSEC failure, lame delegation, ...)
  | 'refused' // REFUSED: the servers will not resolve it for us
  | 'unreachable' // the servers' ports are closed
  | 'cname-chain' // the aliases loop or run past MAX_CNAME_HOPS
  | 'error'; // anything else (a malformed answer, ...)

export type TxtAnswer =
  /**
   * The name's TXT records, each one's character-strings joined (RFC 7208 §3.3 reads SPF this way);
   * none when the name or its records do not exist. `chain` is the name and each alias followed.
   */
  { ok: true; records: string[]; chain: string[] } | { ok: false; failure: TxtFailure };

/** Codes of node:dns (c-ares) that mean "no such name" or "no such records": a conclusive absence. */
const NXDOMAIN = 'ENOTFOUND';
const NODATA = 'ENODATA';

export async function lookupTxt(name: string, options: DnsOptions): Promise<TxtAnswer> {
  // c-ares waits `timeout` for each try of each server (backing off); the deadline below bounds the
  // total, whatever the number of servers.
  const resolver = new Resolver({ timeout: Math.max(25, Math.floor(options.timeoutMs / 3)), tries: 2 });
  if (options.servers.length > 0) resolver.setServers([...options.servers]);
  let expired = false;
  const deadline = setTimeout(() => {
    expired = true;
    resolver.cancel();
  }, options.timeoutMs);
  try {
    const chain = [name];
    for (;;) {
      const current = chain[chain.length - 1]!;
      const txt = await records(resolver, current);
      if (txt === 'nxdomain') return { ok: true, records: [], chain };
      if (txt.length > 0) return { ok: true, records: txt, chain };
      const target = await alias(resolver, current);
      if (target === null) return { ok: true, records: [], chain };
      if (chain.includes(target) || chain.length > MAX_CNAME_HOPS)
        return { ok: false, failure: 'cname-chain' };
      chain.push(target);
    }
  } catch (err) {
    return { ok: false, failure: expired ? 'timeout' : failureOf(err) };
  } finally {
    clearTimeout(deadline);
  }
}

async function records(resolver: Resolver, name: string): Promise<string[] | 'nxdomain'> {
  try {
    return (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
  } catch (err) {
    if (codeOf(err) === NXDOMAIN) return 'nxdomain';
    if (codeOf(err) === NODATA) return [];
    throw err;
  }
}

/** The name's CNAME target, lowercase without the root dot, or null when it has none. */
async function alias(resolver: Resolver, name: string): Promise<string | null> {
  try {
    const [target] = await resolver.resolveCname(name);
    return target === undefined ? null : target.toLowerCase().replace(/\.$/, '');
  } catch (err) {
    if (codeOf(err) === NXDOMAIN || codeOf(err) === NODATA) return null;
    throw err;
  }
}

const codeOf = (err: unknown): string | undefined =>
  typeof err === 'object' && err !== null && 'code' in err
    ? String((err as { code: unknown }).code)
    : undefined;

function failureOf(err: unknown): TxtFailure {
  switch (codeOf(err)) {
    case 'ETIMEOUT':
      return 'timeout';
    case 'ESERVFAIL':
      return 'server-failure';
    case 'EREFUSED':
      return 'refused';
    case 'ECONNREFUSED':
      return 'unreachable';
    default:
      return 'error';
  }
}

export type SrvAnswer =
  /** The name's SRV records (targets lowercase without the root dot); none when it has none. */
  { ok: true; records: { target: string; port: number }[] } | { ok: false; failure: TxtFailure };

/** SRV records at `name` as the servers answer them now (a resolver of its own: no cached answer). */
export async function lookupSrv(name: string, options: DnsOptions): Promise<SrvAnswer> {
  const resolver = new Resolver({ timeout: Math.max(25, Math.floor(options.timeoutMs / 3)), tries: 2 });
  if (options.servers.length > 0) resolver.setServers([...options.servers]);
  let expired = false;
  const deadline = setTimeout(() => {
    expired = true;
    resolver.cancel();
  }, options.timeoutMs);
  try {
    const records = await resolver.resolveSrv(name);
    return {
      ok: true,
      records: records.map((r) => ({ target: r.name.toLowerCase().replace(/\.$/, ''), port: r.port })),
    };
  } catch (err) {
    if (codeOf(err) === NXDOMAIN || codeOf(err) === NODATA) return { ok: true, records: [] };
    return { ok: false, failure: expired ? 'timeout' : failureOf(err) };
  } finally {
    clearTimeout(deadline);
  }
}
