// GETs to a DNS provider's Domain Connect API (settings, template lookups), with the SSRF rules of
// DECISIONS.md §6 "DNS and domains": the host is resolved once through DNS_SERVERS and checked
// (dns/checked-host.ts), and the request goes to the checked address (the lookup below hands the socket
// that address, so a second DNS answer is never asked for). https for public addresses; a provider on a
// non-public address is reached only inside DOMAIN_CONNECT_ALLOWED_NETWORKS, and then over http (a test's
// loopback provider has no certificate a client could check). No redirect is followed; answers are small.
import type { IncomingMessage } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import type { Config } from '../../config.js';
import { checkHost } from '../../dns/checked-host.js';

/** A settings document or a template lookup is a few hundred bytes; anything past this is refused. */
const MAX_BYTES = 64 * 1024;
const TIMEOUT_MS = 5000;

export type ProviderAnswer =
  | { ok: true; status: number; body: string }
  /** `refused`: the address is not one the platform may reach; `failed`: it did not answer usefully. */
  | { ok: false; kind: 'refused' | 'failed'; reason: string };

type Deps = Pick<Config, 'dnsServers' | 'dnsTimeoutMs' | 'domainConnect'>;

/**
 * GET `url` (http: or https:). The address decides the scheme: a public one is asked over https only
 * (an http URL is refused), an allowed non-public one over http.
 */
export async function providerGet(url: URL, config: Deps): Promise<ProviderAnswer> {
  if (url.username || url.password)
    return { ok: false, kind: 'refused', reason: 'the URL carries credentials' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const checked = await checkHost(host, {
    dnsServers: config.dnsServers,
    dnsTimeoutMs: config.dnsTimeoutMs,
    allowedNetworks: config.domainConnect.allowedNetworks,
  });
  if (!checked.ok) {
    return checked.reason === 'unresolved'
      ? { ok: false, kind: 'failed', reason: `${host} does not resolve` }
      : {
          ok: false,
          kind: 'refused',
          reason: `${host} is on ${checked.address}, which is not a public address`,
        };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { ok: false, kind: 'refused', reason: `${url.protocol} is not http(s)` };
  if (url.protocol === 'http:' && checked.isPublic)
    return { ok: false, kind: 'refused', reason: `${url.origin} is not https` };
  const target = new URL(url);
  if (!checked.isPublic) target.protocol = 'http:';
  const family = isIP(checked.address);
  const pinned: LookupFunction = (_hostname, options, callback) => {
    const answer = callback as (
      err: Error | null,
      address: string | { address: string; family: number }[],
      family?: number,
    ) => void;
    if (options.all) answer(null, [{ address: checked.address, family }]);
    else answer(null, checked.address, family);
  };
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  try {
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = send(target, {
        method: 'GET',
        signal: AbortSignal.timeout(TIMEOUT_MS),
        headers: { accept: 'application/json' },
        lookup: pinned,
      });
      req.on('response', resolve);
      req.on('error', reject);
      req.end();
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response) {
      size += (chunk as Buffer).length;
      if (size > MAX_BYTES) {
        response.destroy();
        return { ok: false, kind: 'failed', reason: 'the answer is too large' };
      }
      chunks.push(chunk as Buffer);
    }
    return { ok: true, status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') };
  } catch (err) {
    const code = (err as { code?: string }).code;
    return {
      ok: false,
      kind: 'failed',
      reason: code ? `the request failed (${code})` : 'the request failed',
    };
  }
}

/** The base URL of a provider API host as discovery gives it (`api.example.net`, maybe with a port or a path prefix). */
export function providerBase(value: string): URL | null {
  let url: URL;
  try {
    url = new URL(`https://${value.trim().replace(/\/+$/, '')}`);
  } catch {
    return null;
  }
  if (url.username || url.password || url.search || url.hash || url.hostname === '') return null;
  return url;
}
