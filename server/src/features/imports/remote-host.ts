// The import's remote host, resolved once and checked (dns/checked-host.ts) against
// IMPORT_ALLOWED_NETWORKS; the address checked is the one the import connects to, stored with it.
import { isIP } from 'node:net';
import type { Config } from '../../config.js';
import { checkHost } from '../../dns/checked-host.js';
import { unprocessable } from '../../http/errors.js';

export async function checkedAddress(
  host: string,
  config: Pick<Config, 'dnsServers' | 'dnsTimeoutMs' | 'importAllowedNetworks'>,
): Promise<string> {
  const checked = await checkHost(host, { ...config, allowedNetworks: config.importAllowedNetworks });
  if (checked.ok) return checked.address;
  if (checked.reason === 'unresolved')
    throw unprocessable('import-host-refused', `${host} does not resolve to any address.`);
  throw unprocessable(
    'import-host-refused',
    isIP(host)
      ? `${checked.address} is not a public address; imports reach public servers only.`
      : `${host} resolves to ${checked.address}, which is not a public address; imports reach public servers only.`,
  );
}
