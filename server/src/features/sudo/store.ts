// All SQL of elevation: the factors a user enrolled, pending TOTP secrets, passkeys and their
// server-side challenges.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';

export interface FactorsRow {
  user_id: string;
  pin_hash: string | null;
  pin_locked_at: Date | null;
  totp_secret_sealed: string | null;
  totp_last_step: string | null;
  consecutive_failures: number;
}

export async function findFactors(db: Db, userId: string): Promise<FactorsRow | undefined> {
  const [row] = await db<FactorsRow[]>`
    select user_id, pin_hash, pin_locked_at, totp_secret_sealed, totp_last_step, consecutive_failures
    from elevation_factors where user_id = ${userId}`;
  return row;
}

export async function countPasskeys(db: Db, userId: string): Promise<number> {
  const [row] = await db<
    { n: number }[]
  >`select count(*)::int as n from webauthn_credentials where user_id = ${userId}`;
  return row!.n;
}

export async function setPin(db: Db, userId: string, hash: string, now: Date): Promise<void> {
  await db`
    insert into elevation_factors (user_id, pin_hash, updated_at) values (${userId}, ${hash}, ${now})
    on conflict (user_id) do update set pin_hash = excluded.pin_hash, pin_locked_at = null, updated_at = excluded.updated_at`;
}

export async function setTotpSecret(db: Db, userId: string, sealed: string, now: Date): Promise<void> {
  await db`
    insert into elevation_factors (user_id, totp_secret_sealed, totp_enrolled_at, totp_last_step, updated_at)
    values (${userId}, ${sealed}, ${now}, null, ${now})
    on conflict (user_id) do update set totp_secret_sealed = excluded.totp_secret_sealed,
      totp_enrolled_at = excluded.totp_enrolled_at, totp_last_step = null, updated_at = excluded.updated_at`;
}

/**
 * Accepts TOTP step `step` for the user at most once, everywhere: true only for the one statement that
 * moves totp_last_step forward past it (RFC 6238 §5.2: a verifier must not accept the same code twice).
 */
export async function claimTotpStep(db: Db, userId: string, step: number, now: Date): Promise<boolean> {
  const rows = await db`
    update elevation_factors set totp_last_step = ${step}, updated_at = ${now}
    where user_id = ${userId} and totp_secret_sealed is not null
      and (totp_last_step is null or totp_last_step < ${step})
    returning user_id`;
  return rows.length === 1;
}

export async function clearFactor(db: Db, userId: string, method: 'pin' | 'totp', now: Date): Promise<void> {
  if (method === 'pin') {
    await db`update elevation_factors set pin_hash = null, pin_locked_at = null, updated_at = ${now} where user_id = ${userId}`;
  } else {
    await db`
      update elevation_factors set totp_secret_sealed = null, totp_enrolled_at = null, totp_last_step = null,
        updated_at = ${now}
      where user_id = ${userId}`;
    await db`delete from totp_pending where user_id = ${userId}`;
  }
}

export async function deletePasskeys(db: Db, userId: string): Promise<void> {
  await db`delete from webauthn_credentials where user_id = ${userId}`;
  await db`delete from webauthn_challenges where user_id = ${userId}`;
}

/** One more consecutive failure; answers the new count. */
export async function recordFailure(db: Db, userId: string, now: Date): Promise<number> {
  const [row] = await db<{ consecutive_failures: number }[]>`
    insert into elevation_factors (user_id, consecutive_failures, updated_at) values (${userId}, 1, ${now})
    on conflict (user_id) do update set consecutive_failures = elevation_factors.consecutive_failures + 1,
      updated_at = excluded.updated_at
    returning consecutive_failures`;
  return row!.consecutive_failures;
}

/** Locks the PIN once the cap is reached; true for the one call that locked it (it mails the owner). */
export async function lockPin(db: Db, userId: string, now: Date): Promise<boolean> {
  const rows = await db`
    update elevation_factors set pin_locked_at = ${now}, updated_at = ${now}
    where user_id = ${userId} and pin_hash is not null and pin_locked_at is null
    returning user_id`;
  return rows.length === 1;
}

export async function resetFailures(db: Db, userId: string, now: Date): Promise<void> {
  await db`
    update elevation_factors set consecutive_failures = 0, updated_at = ${now}
    where user_id = ${userId} and consecutive_failures <> 0`;
}

/** A new sign-in lifts the lock of the absolute cap and starts the count afresh. */
export async function unlockAfterSignIn(db: Db, userId: string, now: Date): Promise<void> {
  await db`
    update elevation_factors set pin_locked_at = null, consecutive_failures = 0, updated_at = ${now}
    where user_id = ${userId} and (pin_locked_at is not null or consecutive_failures <> 0)`;
}

// --- totp_pending -----------------------------------------------------------------------------------

export async function putPendingTotp(db: Db, userId: string, sealed: string, expiresAt: Date): Promise<void> {
  await db`
    insert into totp_pending (user_id, secret_sealed, expires_at) values (${userId}, ${sealed}, ${expiresAt})
    on conflict (user_id) do update set secret_sealed = excluded.secret_sealed, expires_at = excluded.expires_at`;
}

export async function findPendingTotp(db: Db, userId: string, now: Date): Promise<string | undefined> {
  const [row] = await db<{ secret_sealed: string }[]>`
    select secret_sealed from totp_pending where user_id = ${userId} and expires_at > ${now}`;
  return row?.secret_sealed;
}

export async function deletePendingTotp(db: Db, userId: string): Promise<void> {
  await db`delete from totp_pending where user_id = ${userId}`;
}

// --- webauthn ---------------------------------------------------------------------------------------

export interface PasskeyRow {
  id: string;
  user_id: string;
  credential_id: string;
  public_key: Buffer;
  sign_count: string;
  transports: string[];
}

export async function insertChallenge(
  db: Db,
  input: { userId: string; purpose: 'register' | 'authenticate'; challenge: string; expiresAt: Date },
  now: Date,
): Promise<void> {
  await db`
    insert into webauthn_challenges (id, user_id, purpose, challenge, expires_at, created_at)
    values (${randomUUID()}, ${input.userId}, ${input.purpose}, ${input.challenge}, ${input.expiresAt}, ${now})`;
}

/**
 * Before a new challenge is stored: drops the user's expired challenges of that purpose and all but
 * the newest `keep - 1` live ones, so asking for options again and again cannot grow the table.
 */
export async function pruneChallenges(
  db: Db,
  userId: string,
  purpose: 'register' | 'authenticate',
  keep: number,
  now: Date,
): Promise<void> {
  await db`
    delete from webauthn_challenges
    where user_id = ${userId} and purpose = ${purpose}
      and (expires_at <= ${now} or id not in (
        select id from webauthn_challenges
        where user_id = ${userId} and purpose = ${purpose} and expires_at > ${now}
        order by created_at desc, id
        limit ${keep - 1}))`;
}

/**
 * Spends the user's challenge `challenge` of that purpose: deleted whether or not it is still live, so
 * an attempt uses it up. Answers true only when it existed and had not expired.
 */
export async function takeChallenge(
  db: Db,
  userId: string,
  purpose: 'register' | 'authenticate',
  challenge: string,
  now: Date,
): Promise<boolean> {
  const [row] = await db<{ live: boolean }[]>`
    delete from webauthn_challenges
    where user_id = ${userId} and purpose = ${purpose} and challenge = ${challenge}
    returning expires_at > ${now} as live`;
  return row?.live === true;
}

export async function listPasskeys(db: Db, userId: string): Promise<PasskeyRow[]> {
  return db<PasskeyRow[]>`
    select id, user_id, credential_id, public_key, sign_count, transports
    from webauthn_credentials where user_id = ${userId} order by created_at, id`;
}

export async function findPasskey(
  db: Db,
  userId: string,
  credentialId: string,
): Promise<PasskeyRow | undefined> {
  const [row] = await db<PasskeyRow[]>`
    select id, user_id, credential_id, public_key, sign_count, transports
    from webauthn_credentials where user_id = ${userId} and credential_id = ${credentialId}`;
  return row;
}

/** A verified registration, as stored. */
export interface NewPasskey {
  credentialId: string;
  publicKey: Buffer;
  signCount: number;
  transports: string[];
  deviceType: string | null;
  backedUp: boolean;
}

export async function insertPasskey(db: Db, input: NewPasskey & { userId: string }, now: Date): Promise<boolean> {
  const rows = await db`
    insert into webauthn_credentials (id, user_id, credential_id, public_key, sign_count, transports, device_type,
                                      backed_up, created_at)
    values (${randomUUID()}, ${input.userId}, ${input.credentialId}, ${input.publicKey}, ${input.signCount},
            ${input.transports}, ${input.deviceType}, ${input.backedUp}, ${now})
    on conflict (credential_id) do nothing
    returning id`;
  return rows.length === 1;
}

/**
 * Stores the new signature counter only if it moved forward from what was read (compare-and-set),
 * so two concurrent assertions with one counter value cannot both pass.
 */
export async function advanceSignCount(
  db: Db,
  id: string,
  expected: string,
  next: number,
  now: Date,
): Promise<boolean> {
  const rows = await db`
    update webauthn_credentials set sign_count = ${next}, last_used_at = ${now}
    where id = ${id} and sign_count = ${expected}
    returning id`;
  return rows.length === 1;
}
