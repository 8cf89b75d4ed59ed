// Seals secrets that rows written before migration 0005 hold in the clear, once, at start-up: the
// private halves of signing keys and captcha providers' secrets. Idempotent; each row is sealed and
// its plaintext cleared in one statement, so processes starting together do no harm.
import { listUnsealedSigningKeys, sealSigningKey } from '../auth/crypto/store.js';
import type { Db } from '../db/client.js';
import { listUnsealedCaptchaSecrets, sealCaptchaSecret } from '../features/public/store.js';
import type { SecretBox } from './secret-box.js';

export async function sealLegacySecrets(db: Db, box: SecretBox): Promise<number> {
  let sealed = 0;
  for (const row of await listUnsealedSigningKeys(db)) {
    await sealSigningKey(db, row.kid, await box.seal('signing-key', JSON.stringify(row.private_jwk)));
    sealed += 1;
  }
  for (const row of await listUnsealedCaptchaSecrets(db)) {
    await sealCaptchaSecret(db, row.id, await box.seal('captcha-secret', row.secret));
    sealed += 1;
  }
  return sealed;
}
