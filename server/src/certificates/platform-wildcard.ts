// The wildcard certificate of web services' platform hosts, `*.apps.{PLATFORM_DOMAIN}` (one label under
// `apps.`, server/src/dns/platform-names.ts), issued by the local CA when missing or due. The edge checks
// it when it starts and on every full reconcile: the edge is what serves it and runs for as long as it is
// served, so a certificate coming due is renewed without a restart of anything; the API's start would
// renew only as often as the API restarts.
import type { Config } from '../config.js';
import type { Db } from '../db/client.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { issueLocalCertificate } from './local-ca.js';
import { getCertificate, putCertificate } from './store.js';

/** A local certificate is renewed when less than this is left of it (a third of its 90 days). */
export const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;

export const platformWildcard = (platformDomain: string): string => `*.apps.${platformDomain.toLowerCase()}`;

/** Issues the wildcard when it is missing or due; true when it issued one. */
export async function ensurePlatformCertificate(
  db: Db,
  box: SecretBox,
  config: Pick<Config, 'dataDir' | 'platformName' | 'platformDomain'>,
  now: Date = new Date(),
): Promise<boolean> {
  const hostname = platformWildcard(config.platformDomain);
  const current = await getCertificate(db, hostname);
  if (current && current.notAfter.getTime() - now.getTime() > RENEW_BEFORE_MS && current.notBefore <= now)
    return false;
  const issued = await issueLocalCertificate(config, [hostname], now);
  await putCertificate(db, box, { hostname, issuer: 'local', ...issued }, now);
  return true;
}
