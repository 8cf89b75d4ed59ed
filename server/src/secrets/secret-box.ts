// Secrets kept for later use (TOTP secrets, signing keys' private halves, captcha secrets, ...) are
// sealed with AES-256-GCM under ENCRYPTION_KEY before they reach the database (DECISIONS.md §3).
//
// A sealed value reads `v1.{kid}.{base64url(iv ‖ ciphertext ‖ tag)}`: `kid` names the key (the first
// 8 bytes of its SHA-256, hex), so the key can rotate: the first configured key seals, every
// configured key opens. The value's purpose (`totp`, `signing-key`, ...) is bound as additional
// authenticated data, so a sealed value copied into another column does not open there.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export interface EncryptionKey {
  kid: string;
  key: Buffer;
}

// One per kind of secret kept; later issues add theirs (OAuth client secrets, provider tokens, ...).
export type SealPurpose =
  | 'signing-key'
  | 'totp'
  | 'captcha-secret'
  | 'oauth-flow'
  | 'idempotent-answer'
  | 'sftp-host-key'
  | 'import-password'
  | 'rcon-password'
  | 'tls-key'
  | 'acme-account-key';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SealError extends Error {
  override readonly name = 'SealError';
}

export function encryptionKey(key: Buffer): EncryptionKey {
  if (key.length !== 32) throw new RangeError('an encryption key is 32 bytes (AES-256)');
  return { kid: createHash('sha256').update(key).digest('hex').slice(0, 16), key };
}

export class SecretBox {
  #keys: Promise<readonly EncryptionKey[]> | null = null;

  /** `load` is called once, on first use, and its answer kept (a failure is retried next time). */
  constructor(private readonly load: () => Promise<readonly EncryptionKey[]>) {}

  static of(keys: readonly Buffer[]): SecretBox {
    const loaded = keys.map(encryptionKey);
    return new SecretBox(async () => loaded);
  }

  async seal(purpose: SealPurpose, plaintext: string | Buffer): Promise<string> {
    const [current] = await this.#loaded();
    if (!current) throw new SealError('no encryption key is configured');
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', current.key, iv);
    cipher.setAAD(Buffer.from(purpose));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    const blob = Buffer.concat([iv, body, cipher.getAuthTag()]);
    return `${VERSION}.${current.kid}.${blob.toString('base64url')}`;
  }

  async open(purpose: SealPurpose, sealed: string): Promise<Buffer> {
    const [version, kid, payload, extra] = sealed.split('.');
    if (version !== VERSION || !kid || !payload || extra !== undefined) throw new SealError('not a sealed value');
    const key = (await this.#loaded()).find((k) => k.kid === kid);
    if (!key) throw new SealError(`sealed with key ${kid}, which is not configured`);
    const blob = Buffer.from(payload, 'base64url');
    if (blob.length < IV_BYTES + TAG_BYTES) throw new SealError('sealed value is truncated');
    const decipher = createDecipheriv('aes-256-gcm', key.key, blob.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(purpose));
    decipher.setAuthTag(blob.subarray(blob.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(blob.subarray(IV_BYTES, blob.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new SealError('sealed value does not authenticate (wrong key or purpose, or altered)');
    }
  }

  async openText(purpose: SealPurpose, sealed: string): Promise<string> {
    return (await this.open(purpose, sealed)).toString('utf8');
  }

  #loaded(): Promise<readonly EncryptionKey[]> {
    this.#keys ??= this.load().catch((err: unknown) => {
      this.#keys = null;
      throw err;
    });
    return this.#keys;
  }
}
