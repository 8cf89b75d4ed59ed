// The synchronous flow's apply URL (the Domain Connect spec, "Synchronous flow" and "Security
// considerations"): `{urlSyncUX}/v2/domainTemplates/providers/{providerId}/services/{serviceId}/apply`
// with `domain`, `host` (absent for the apex) and the template's variables `target` and `port`. When a
// signing key is configured the query is signed: `sig` is the base64 RSA-SHA256 signature of the query
// string exactly as sent before `&sig=`, and `key` names the TXT record (under the template's
// syncPubKeyDomain) holding the public key, so the provider can check the link was made by the platform.
import { createPublicKey, sign, type KeyObject } from 'node:crypto';

export interface ApplyInput {
  domain: string;
  host: string;
  target: string;
  port: number;
}

export function applyUrl(
  urlSyncUX: URL,
  template: { providerId: string; serviceId: string },
  input: ApplyInput,
  signing: { key: KeyObject; keyId: string } | null,
): string {
  const params = new URLSearchParams({ domain: input.domain });
  if (input.host !== '') params.set('host', input.host);
  params.set('target', input.target);
  params.set('port', String(input.port));
  let query = params.toString();
  if (signing) {
    const sig = sign('sha256', Buffer.from(query, 'utf8'), signing.key).toString('base64');
    query += `&${new URLSearchParams({ sig, key: signing.keyId }).toString()}`;
  }
  const base = urlSyncUX.href.replace(/\/+$/, '');
  return `${base}/v2/domainTemplates/providers/${encodeURIComponent(template.providerId)}/services/${encodeURIComponent(template.serviceId)}/apply?${query}`;
}

/** Characters of the key per TXT record: one character-string holds 255, less the `p=N,a=RS256,d=` prefix. */
const CHUNK = 200;

/**
 * The TXT records that publish the signing key's public half (the spec's `p=1,a=RS256,d=...` form:
 * the base64 DER SubjectPublicKeyInfo split over numbered records).
 */
export function publicKeyRecords(privateKey: KeyObject): string[] {
  const der = createPublicKey(privateKey).export({ type: 'spki', format: 'der' }).toString('base64');
  const records: string[] = [];
  for (let i = 0; i * CHUNK < der.length; i += 1)
    records.push(`p=${i + 1},a=RS256,d=${der.slice(i * CHUNK, (i + 1) * CHUNK)}`);
  return records;
}
