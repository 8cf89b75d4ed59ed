// Process-wide random secrets (peppers), created on first use and shared through the database so
// that every API process digests with the same key.
import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/client.js';
import { findSecret, insertSecretIfAbsent } from './store.js';

/**
 * The secrets the credential code uses. One per purpose, so that a digest made for one purpose can
 * never be matched against another and each could be replaced on its own.
 */
export const SECRET_NAMES = {
  /** HMAC key of `successorRefreshToken` (tokens.ts). */
  refreshSuccessor: 'refresh-successor-pepper',
  /** HMAC key of the stored digests of personal API and application tokens (`keyedDigest`). */
  apiTokenDigest: 'api-token-pepper',
} as const;
export type PepperName = keyof typeof SECRET_NAMES;

/**
 * The secret called `name`, made of `bytes` random bytes the first time any process asks.
 *
 * Race-free across processes: every caller offers its own random value with
 * `insert ... on conflict do nothing`, which waits for a concurrent insert of the same name to commit,
 * then reads back whichever value won. The two steps are separate statements so that, under READ
 * COMMITTED, the read sees the winner's row; do not call this inside a REPEATABLE READ transaction.
 * Callers should read once at start-up and keep the value.
 */
export async function getOrCreateSecret(db: Db, name: string, bytes = 32): Promise<Buffer> {
  if (!Number.isInteger(bytes) || bytes < 16) throw new RangeError('a server secret has at least 16 bytes');
  await insertSecretIfAbsent(db, name, randomBytes(bytes));
  const value = await findSecret(db, name);
  if (value === undefined) throw new Error(`server secret ${name} vanished after insert`);
  // A stored secret shorter than asked for means the code's expectation changed; replacing it would
  // orphan every digest made with it, so stop and let a person decide.
  if (value.length < bytes) {
    throw new Error(`server secret ${name} holds ${value.length} bytes, ${bytes} required`);
  }
  return value;
}
