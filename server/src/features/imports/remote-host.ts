// The import's remote host, resolved once and checked (DECISIONS.md §6 "Imports"): a name is looked up
// through DNS_SERVERS, every address it has must be public (or inside IMPORT_ALLOWED_NETWORKS), and the
// address checked is the one the import connects to, stored with it; nothing resolves the name again,
// so a second DNS answer cannot point the connection elsewhere (CVE-2024-34068).
import { Resolver } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { Config } from '../../config.js';
import { unprocessable } from '../../http/errors.js';
import { isPublicAddress } from '../oauth/picture.js';

export async function checkedAddress(
  host: string,
  config: Pick<Config, 'dnsServers' | 'dnsTimeoutMs' | 'importAllowedNetworks'>,
): Promise<string> {
  const literal = host;
  const addresses = isIP(literal) ? [literal] : await resolveAll(host, config);
  if (addresses.length === 0) {
    throw unprocessable('import-host-refused', `${host} does not resolve to any address.`);
  }
  const allowed = new BlockList();
  for (const net of config.importAllowedNetworks) allowed.addSubnet(net.address, net.prefix, net.family);
  for (const address of addresses) {
    const family = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    if (!isPublicAddress(address) && !allowed.check(address, family)) {
      throw unprocessable(
        'import-host-refused',
        isIP(literal)
          ? `${address} is not a public address; imports reach public servers only.`
          : `${host} resolves to ${address}, which is not a public address; imports reach public servers only.`,
      );
    }
  }
  return addresses[0]!;
}

async function resolveAll(
  host: string,
  config: Pick<Config, 'dnsServers' | 'dnsTimeoutMs'>,
): Promise<string[]> {
  const resolver = new Resolver({ timeout: Math.max(25, Math.floor(config.dnsTimeoutMs / 3)), tries: 2 });
  if (config.dnsServers.length > 0) resolver.setServers([...config.dnsServers]);
  const deadline = setTimeout(() => resolver.cancel(), config.dnsTimeoutMs);
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
