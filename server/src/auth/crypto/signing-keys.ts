// The Ed25519 keys that sign access tokens (EdDSA JWS, RFC 8037), shared by every API process through
// the signing_keys table.
//
// Life of a key: it signs from creation until retire_after (rotateAfterSeconds later); then the next
// caller makes a new one. It keeps verifying until expires_at = retire_after + maxTokenTtlSeconds:
// a token signed in its last second with the longest lifetime (an elevated token, one hour) must still
// verify until it expires, and not a moment longer.
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import type { Sql } from '../../db/client.js';
import type { Clock } from '../../clock.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import {
  deleteExpiredSigningKeys,
  findCurrentSigningKey,
  findSigningKey,
  insertSigningKey,
  lockSigningKeyCreation,
  type KeyTable,
  type SigningKeyRow,
} from './store.js';

export interface KeyRingOptions {
  /** Lifetime of an ordinary access token (DECISIONS.md §3: 15 minutes). */
  accessTokenTtlSeconds: number;
  /** The longest lifetime any access token may have (a PIN-elevated token: one hour). */
  maxTokenTtlSeconds: number;
  /** How long a key signs before the next one takes over. */
  rotateAfterSeconds: number;
  /**
   * How long a process trusts what it read from signing_keys before reading again. Short, so that a
   * key deleted by hand (compromise) stops verifying everywhere within this time.
   */
  cacheTtlSeconds: number;
  /** Where the keys live: access-token keys, or the edge gateway's ticket keys (never each other's). */
  table: KeyTable;
}

export const DEFAULT_KEY_RING_OPTIONS: Readonly<KeyRingOptions> = {
  accessTokenTtlSeconds: 15 * 60,
  maxTokenTtlSeconds: 60 * 60,
  rotateAfterSeconds: 30 * 24 * 60 * 60,
  cacheTtlSeconds: 60,
  table: 'signing_keys',
};

export const SIGNING_ALG = 'EdDSA';

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  retireAfter: Date;
}

export interface VerificationKey {
  kid: string;
  publicKey: CryptoKey;
  expiresAt: Date;
}

// An RFC 7638 SHA-256 thumbprint in base64url: checked before any lookup, so garbage costs no query.
const KID_RE = /^[A-Za-z0-9_-]{43}$/;

interface Cached<T> {
  value: T;
  fetchedAt: number;
}

export class KeyRing {
  readonly options: Readonly<KeyRingOptions>;
  #signing: Cached<SigningKey> | null = null;
  #signingInFlight: Promise<SigningKey> | null = null;
  readonly #verifying = new Map<string, Cached<VerificationKey>>();
  readonly #verifyingInFlight = new Map<string, Promise<VerificationKey | null>>();

  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
    /** Seals private halves before they are stored, and opens them (DECISIONS.md §3). */
    private readonly box: SecretBox,
    options: Partial<KeyRingOptions> = {},
  ) {
    this.options = Object.freeze({ ...DEFAULT_KEY_RING_OPTIONS, ...options });
    validate(this.options);
  }

  /**
   * The key to sign with at `now`: the newest one not past its retire_after, made when there is none.
   * Processes that find none at the same moment agree on one: creation happens under a transaction-
   * scoped advisory lock, and whoever gets the lock second re-reads and finds the first one's key.
   */
  async currentSigningKey(now: Date = this.clock.now()): Promise<SigningKey> {
    const cached = this.#signing;
    if (cached && this.#fresh(cached, now) && now < cached.value.retireAfter) return cached.value;
    this.#signingInFlight ??= this.#loadSigningKey(now).finally(() => {
      this.#signingInFlight = null;
    });
    return this.#signingInFlight;
  }

  /**
   * The public key `kid` names, if it still verifies at `now`; null when unknown or past expires_at.
   * A cache miss reads the database, so a key another process made verifies here too.
   */
  async verificationKey(kid: string, now: Date = this.clock.now()): Promise<VerificationKey | null> {
    if (!KID_RE.test(kid)) return null;
    const cached = this.#verifying.get(kid);
    let key: VerificationKey | null;
    if (cached && this.#fresh(cached, now)) {
      key = cached.value;
    } else {
      let pending = this.#verifyingInFlight.get(kid);
      if (!pending) {
        pending = this.#loadVerificationKey(kid, now).finally(() => this.#verifyingInFlight.delete(kid));
        this.#verifyingInFlight.set(kid, pending);
      }
      key = await pending;
    }
    if (key && now < key.expiresAt) return key;
    this.#verifying.delete(kid);
    return null;
  }

  /** Deletes keys past expires_at (they verify nothing any more); returns how many. */
  async deleteExpiredKeys(now: Date = this.clock.now()): Promise<number> {
    return deleteExpiredSigningKeys(this.sql, now, this.options.table);
  }

  async #loadSigningKey(now: Date): Promise<SigningKey> {
    const row =
      (await findCurrentSigningKey(this.sql, now, this.options.table)) ??
      (await this.sql.begin(async (tx) => {
        await lockSigningKeyCreation(tx, this.options.table);
        // Read again under the lock: a process that held it before us may have made the key.
        const existing = await findCurrentSigningKey(tx, now, this.options.table);
        if (existing) return existing;
        const created = await newSigningKeyRow(now, this.options, this.box);
        await insertSigningKey(tx, created, this.options.table);
        return created;
      }));
    const key: SigningKey = {
      kid: row.kid,
      privateKey: await importKey(await this.#privateJwk(row)),
      retireAfter: row.retire_after,
    };
    this.#signing = { value: key, fetchedAt: now.getTime() };
    return key;
  }

  async #loadVerificationKey(kid: string, now: Date): Promise<VerificationKey | null> {
    const row = await findSigningKey(this.sql, kid, this.options.table);
    if (!row) {
      this.#verifying.delete(kid);
      return null;
    }
    const key: VerificationKey = {
      kid,
      publicKey: await importKey(row.public_jwk),
      expiresAt: row.expires_at,
    };
    this.#verifying.set(kid, { value: key, fetchedAt: now.getTime() });
    return key;
  }

  async #privateJwk(row: SigningKeyRow): Promise<JWK> {
    if (row.private_jwk_sealed) return JSON.parse(await this.box.openText('signing-key', row.private_jwk_sealed)) as JWK;
    // A key stored before sealing existed; sealLegacySecrets seals it at start-up.
    if (row.private_jwk) return row.private_jwk;
    throw new Error(`signing key ${row.kid} has no private half`);
  }

  #fresh(entry: Cached<unknown>, now: Date): boolean {
    const age = now.getTime() - entry.fetchedAt;
    return age >= 0 && age < this.options.cacheTtlSeconds * 1000;
  }
}

async function newSigningKeyRow(now: Date, options: KeyRingOptions, box: SecretBox): Promise<SigningKeyRow> {
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { crv: 'Ed25519', extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk, 'sha256');
  const retireAfter = new Date(now.getTime() + options.rotateAfterSeconds * 1000);
  return {
    kid,
    alg: SIGNING_ALG,
    // kid, alg and use ride along so that the public half can be published as a JWKS as it is.
    public_jwk: { ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' },
    private_jwk: null,
    private_jwk_sealed: await box.seal('signing-key', JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG })),
    created_at: now,
    retire_after: retireAfter,
    expires_at: new Date(retireAfter.getTime() + options.maxTokenTtlSeconds * 1000),
  };
}

async function importKey(jwk: JWK): Promise<CryptoKey> {
  const key = await importJWK(jwk, SIGNING_ALG);
  if (key instanceof Uint8Array) throw new Error('a signing key row holds a symmetric key');
  return key;
}

function validate(o: KeyRingOptions): void {
  const positive = (n: number) => Number.isInteger(n) && n > 0;
  if (
    !positive(o.accessTokenTtlSeconds) ||
    !positive(o.maxTokenTtlSeconds) ||
    !positive(o.rotateAfterSeconds)
  ) {
    throw new RangeError('key ring lifetimes must be positive whole seconds');
  }
  if (o.accessTokenTtlSeconds > o.maxTokenTtlSeconds) {
    throw new RangeError('accessTokenTtlSeconds must not exceed maxTokenTtlSeconds');
  }
  if (!Number.isInteger(o.cacheTtlSeconds) || o.cacheTtlSeconds < 0) {
    throw new RangeError('cacheTtlSeconds must be a whole number of seconds');
  }
}
