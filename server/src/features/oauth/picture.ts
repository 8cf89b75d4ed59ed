// Fetching a provider's picture (the `picture` claim): a URL the provider (or whoever set up the
// identity there) chose, so it is fetched like any untrusted URL. Only from public addresses, or from
// the configured issuer's own origin (which the operator chose: a provider on loopback in tests);
// connected to the address that was checked (no second DNS answer), no redirects followed, at most
// MAX_BYTES and TIMEOUT_MS. Everything that goes wrong is `null`: a picture never fails a sign-in.
import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { embeddedIpv4 } from '../../dns/embedded-ipv4.js';

export const PICTURE_MAX_BYTES = 5 * 1024 * 1024;
export const PICTURE_TIMEOUT_MS = 5_000;

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  // 64:ff9b::/96 (NAT64) and 2002::/16 (6to4) are judged by the IPv4 address they embed (embedded-ipv4.ts).
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** Whether `address` (an IP literal) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 6) {
    // ::127.0.0.1, ::7f00:1, ::ffff:7f00:1, 64:ff9b::a00:1, 2002:a00:1::1: by the IPv4 address inside.
    const v4 = embeddedIpv4(address);
    if (v4 !== null) return isPublicAddress(v4);
    return !blocked.check(address, 'ipv6');
  }
  return !blocked.check(address, 'ipv4');
}

/**
 * A DNS lookup for the request that refuses a name with any non-public address and hands the socket
 * the address it checked, so a second answer (DNS rebinding) is never asked for.
 */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  // Node asks for every address when it may try several (autoSelectFamily); both shapes are answered.
  const answer = callback as (
    err: Error | null,
    address: string | { address: string; family: number }[],
    family?: number,
  ) => void;
  dnsLookup(hostname, { all: true, verbatim: true }).then(
    (addresses) => {
      const bad = addresses.length === 0 || addresses.some((a) => !isPublicAddress(a.address));
      if (bad) {
        answer(
          Object.assign(new Error(`${hostname} has a non-public address`), { code: 'ENOTPUBLIC' }),
          '',
          4,
        );
        return;
      }
      // Only the checked addresses are ever connected to.
      if (options.all)
        answer(
          null,
          addresses.map((a) => ({ address: a.address, family: a.family })),
        );
      else answer(null, addresses[0]!.address, addresses[0]!.family);
    },
    (err: NodeJS.ErrnoException) => answer(err, '', 4),
  );
};

/**
 * The bytes at `raw`, or null. `issuer` is the provider's configured issuer: a URL of its own origin
 * is fetched wherever that is; any other must resolve to public addresses only.
 */
export async function fetchPicture(
  raw: string,
  issuer: string,
  limits: { maxBytes?: number; timeoutMs?: number } = {},
): Promise<{ bytes: Buffer } | { failed: string }> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { failed: 'not a URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { failed: 'not http(s)' };
  if (url.username || url.password) return { failed: 'carries userinfo' };
  const trusted = url.origin === new URL(issuer).origin;
  // Node connects to an IP literal without any lookup, so the lookup below never sees one.
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (!trusted && isIP(literal) !== 0 && !isPublicAddress(literal)) return { failed: 'non-public address' };
  const maxBytes = limits.maxBytes ?? PICTURE_MAX_BYTES;
  const signal = AbortSignal.timeout(limits.timeoutMs ?? PICTURE_TIMEOUT_MS);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  try {
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = send(url, {
        method: 'GET',
        signal,
        headers: { accept: 'image/*' },
        ...(trusted ? {} : { lookup: publicOnlyLookup }),
      });
      req.on('response', resolve);
      req.on('error', reject);
      req.end();
    });
    if (response.statusCode !== 200) {
      response.resume();
      return { failed: `answered ${response.statusCode}` };
    }
    const declared = Number(response.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      response.destroy();
      return { failed: 'too large' };
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        response.destroy();
        return { failed: 'too large' };
      }
      chunks.push(chunk as Buffer);
    }
    return { bytes: Buffer.concat(chunks) };
  } catch (err) {
    return { failed: err instanceof Error ? `${err.name}: ${err.message}` : 'failed' };
  }
}
