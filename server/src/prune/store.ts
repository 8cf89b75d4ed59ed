// The deletes of periodic pruning (prune.ts): each a bounded batch of one table's dead rows.
import type { Db } from '../db/client.js';

/** Rate-limit buckets past their expiry (ratelimit/store.ts writes it); at most `limit`. */
export async function deleteExpiredRateLimitBuckets(db: Db, now: Date, limit: number): Promise<number> {
  const rows = await db`
    delete from rate_limit_buckets where key in (
      select key from rate_limit_buckets where expires_at <= ${now} limit ${limit}
    )
    returning key`;
  return rows.length;
}

/** Login challenges that expired before `before` (consumed and burnt ones expire too); at most `limit`. */
export async function deleteExpiredLoginChallenges(db: Db, before: Date, limit: number): Promise<number> {
  const rows = await db`
    delete from login_challenges where id in (
      select id from login_challenges where expires_at < ${before} limit ${limit}
    )
    returning id`;
  return rows.length;
}

/** OAuth flows and completion keys that expired before `before` (each table its own bounded batch). */
export async function deleteExpiredOAuthRows(db: Db, before: Date, limit: number): Promise<number> {
  const flows = await db`
    delete from oauth_flows where id in (select id from oauth_flows where expires_at < ${before} limit ${limit})
    returning id`;
  const keys = await db`
    delete from oauth_completions where id in (
      select id from oauth_completions where expires_at < ${before} limit ${limit}
    )
    returning id`;
  return Math.max(flows.length, keys.length);
}

/**
 * Signing keys that stopped verifying before `before`. A key's expires_at lies one longest token
 * lifetime past its retirement (auth/crypto/signing-keys.ts), so no token it signed is still valid.
 */
export async function deleteExpiredSigningKeys(db: Db, before: Date, limit: number): Promise<number> {
  const rows = await db`
    delete from signing_keys where kid in (
      select kid from signing_keys where expires_at < ${before} limit ${limit}
    )
    returning kid`;
  return rows.length;
}

export async function deleteExpiredIdempotencyKeys(db: Db, before: Date, limit: number): Promise<number> {
  const rows = await db`
    delete from idempotency_keys where (caller, key) in (
      select caller, key from idempotency_keys where created_at <= ${before} limit ${limit}
    )
    returning 1`;
  return rows.length;
}
