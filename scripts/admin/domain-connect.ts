// `npm run admin -- domain-connect public-key`: the TXT records a Domain Connect provider reads to check
// the platform's signed apply URLs, as zone-file lines relative to the template's syncPubKeyDomain.
import type { KeyObject } from 'node:crypto';
import { publicKeyRecords } from '../../server/src/features/domain-connect/apply-url.js';

export function publicKeyZoneLines(key: KeyObject, keyId: string): string[] {
  return [
    `; Publish these TXT records at ${keyId}.<syncPubKeyDomain of the template> (the apply URLs' key=${keyId}).`,
    ...publicKeyRecords(key).map((record) => `${keyId} 3600 IN TXT "${record}"`),
  ];
}
