// A remote host resolved once and checked (DECISIONS.md §6 "Imports", "DNS and domains"): a name is
// looked up through DNS_SERVERS, every address it has must be public (or inside the caller's allowed
// networks), and the address checked is the one the caller connects to; nothing resolves the name
// again, so a second DNS answer cannot point the connection elsewhere (CVE-2024-34068). Used by imports
// (SFTP) and Domain Connect (a DNS provider's HTTPS API).
import { Resolver } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { Network } from '../config.js';
import { isPublicAddress } from '../features/oauth/picture.js';

export interface HostCheckOptions {
  dnsServers: readonly string[];
  dnsTimeoutMs: number;
  /** Non-public networks the caller may reach anyway (tests' loopback). */
  allowedNetworks: readonly Network[];
}

export type CheckedHost =
  /** `address`: the one to connect to; `isPublic`: false when only an allowed network let it through. */
  | { ok: true; address: string; isPublic: boolean }
  | { ok: false; reason: 'unresolved' }
  | { ok: false; reason: 'not-public'; address: string };

export async function checkHost(host: string, options: HostCheckOptions): Promise<CheckedHost> {
  const addresses = isIP(host) ? [host] : await resolveAll(host, options);
  if (addresses.length === 0) return { ok: false, reason: 'unresolved' };
  const allowed = new BlockList();
  for (const net of options.allowedNetworks) allowed.addSubnet(net.address, net.prefix, net.family);
  let everyPublic = true;
  for (const address of addresses) {
    if (isPublicAddress(address)) continue;
    everyPublic = false;
    if (!allowed.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6'))
      return { ok: false, reason: 'not-public', address };
  }
  return { ok: true, address: addresses[0]!, isPublic: everyPublic };
}

async function resolveAll(host: string, options: HostCheckOptions): Promise<string[]> {
  const resolver = new Resolver({ timeout: Math.max(25, Math.floor(options.dnsTimeoutMs / 3)), tries: 2 });
  if (options.dnsServers.length > 0) resolver.setServers([...options.dnsServers]);
  const deadline = setTimeout(() => resolver.cancel(), options.dnsTimeoutMs);
  try {
    const [v4, v6] = await Promise.all([
      resolver.resolve4(host).catch(() => [] as string[]),
      resolver.resolve6(host).catch(() => [] as string[]),
    ]);
    return [...v4, ...v6];
  } finally {
    clearTimeout(deadline);
  }
}
