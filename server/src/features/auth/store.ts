// All SQL of sign-in, sessions and passwords.
import { randomUUID } from 'node:crypto';
import type { SessionRow } from '../../auth/sessions.js';
import type { Db } from '../../db/client.js';

// Below the feature (authz reads them for every request); kept reachable here for the feature's own code.
export { findLiveSession, type SessionRow } from '../../auth/sessions.js';

export interface UserRow {
  id: string;
  email: string | null;
  email_verified_at: Date | null;
  password_hash: string | null;
  name: string;
  language: string;
}

export interface RefreshTokenRow {
  id: string;
  session_id: string;
  spent_at: Date | null;
  successor_digest: Buffer | null;
}

const USER_COLUMNS = 'id, email, email_verified_at, password_hash, name, language';

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  const [row] = await db<UserRow[]>`
    select ${db.unsafe(USER_COLUMNS)} from users where email = ${email.toLowerCase()} and deleted_at is null`;
  return row;
}

export async function findUserById(db: Db, id: string): Promise<UserRow | undefined> {
  const [row] = await db<UserRow[]>`
    select ${db.unsafe(USER_COLUMNS)} from users where id = ${id} and deleted_at is null`;
  return row;
}

export async function createUser(
  db: Db,
  input: { email: string; passwordHash: string | null; name: string; language: string; verified?: boolean },
  now: Date,
): Promise<UserRow | undefined> {
  // `on conflict do nothing`: a concurrent signup for the same address creates one account.
  const [row] = await db<UserRow[]>`
    insert into users (id, email, email_verified_at, password_hash, name, language, created_at, updated_at)
    values (${randomUUID()}, ${input.email.toLowerCase()}, ${input.verified ? now : null}, ${input.passwordHash},
            ${input.name}, ${input.language}, ${now}, ${now})
    on conflict (email) do nothing
    returning ${db.unsafe(USER_COLUMNS)}`;
  return row;
}

export async function setPasswordHash(db: Db, userId: string, hash: string, now: Date): Promise<void> {
  await db`update users set password_hash = ${hash}, updated_at = ${now} where id = ${userId}`;
}

/** Sets the first password only: false when the account already has one. */
export async function setFirstPasswordHash(db: Db, userId: string, hash: string, now: Date): Promise<boolean> {
  const rows = await db`
    update users set password_hash = ${hash}, updated_at = ${now}
    where id = ${userId} and password_hash is null returning id`;
  return rows.length === 1;
}

export async function markEmailVerified(db: Db, userId: string, now: Date): Promise<void> {
  await db`update users set email_verified_at = coalesce(email_verified_at, ${now}), updated_at = ${now} where id = ${userId}`;
}

export async function createLoginChallenge(
  db: Db,
  input: { id: string; userId: string; codeDigest: Buffer; expiresAt: Date; ip: string; userAgent: string | null },
  now: Date,
): Promise<void> {
  await db`
    insert into login_challenges (id, user_id, code_digest, created_at, expires_at, ip, user_agent)
    values (${input.id}, ${input.userId}, ${input.codeDigest}, ${now}, ${input.expiresAt}, ${input.ip}, ${input.userAgent})`;
}

/**
 * Counts one attempt against a live challenge and returns it, locked, for the caller's transaction.
 * Undefined when unknown, expired, consumed or already burnt.
 */
export async function takeChallengeAttempt(
  db: Db,
  id: string,
  maxAttempts: number,
  now: Date,
): Promise<{ user_id: string; code_digest: Buffer } | undefined> {
  const [row] = await db<{ user_id: string; code_digest: Buffer }[]>`
    update login_challenges set attempts = attempts + 1
    where id = ${id} and consumed_at is null and expires_at > ${now} and attempts < ${maxAttempts}
    returning user_id, code_digest`;
  return row;
}

export async function consumeChallenge(db: Db, id: string, now: Date): Promise<void> {
  await db`update login_challenges set consumed_at = ${now} where id = ${id}`;
}

export async function createSession(
  db: Db,
  input: { userId: string; absoluteExpiresAt: Date; idleExpiresAt: Date; userAgent: string | null; ip: string },
  now: Date,
): Promise<SessionRow> {
  const [row] = await db<SessionRow[]>`
    insert into sessions (id, user_id, created_at, last_used_at, absolute_expires_at, idle_expires_at, user_agent, ip)
    values (${randomUUID()}, ${input.userId}, ${now}, ${now}, ${input.absoluteExpiresAt}, ${input.idleExpiresAt},
            ${input.userAgent}, ${input.ip})
    returning id, user_id, created_at, last_used_at, absolute_expires_at, idle_expires_at, user_agent, ip, revoked_at`;
  return row!;
}

export async function insertRefreshToken(db: Db, sessionId: string, digest: Buffer, now: Date): Promise<void> {
  await db`
    insert into refresh_tokens (id, session_id, token_digest, created_at)
    values (${randomUUID()}, ${sessionId}, ${digest}, ${now})`;
}

/** The token, locked, with its session: concurrent refreshes of one token serialise on the lock. */
export async function lockRefreshToken(
  db: Db,
  digest: Buffer,
): Promise<{ token: RefreshTokenRow; session: SessionRow } | undefined> {
  const [token] = await db<RefreshTokenRow[]>`
    select id, session_id, spent_at, successor_digest from refresh_tokens where token_digest = ${digest} for update`;
  if (!token) return undefined;
  const [session] = await db<SessionRow[]>`
    select id, user_id, created_at, last_used_at, absolute_expires_at, idle_expires_at, user_agent, ip, revoked_at,
           elevation_epoch
    from sessions where id = ${token.session_id} for update`;
  return session ? { token, session } : undefined;
}

export async function spendRefreshToken(db: Db, id: string, successorDigest: Buffer, now: Date): Promise<void> {
  await db`update refresh_tokens set spent_at = ${now}, successor_digest = ${successorDigest} where id = ${id}`;
}

export async function touchSession(db: Db, id: string, idleExpiresAt: Date, now: Date, ip: string): Promise<void> {
  await db`update sessions set last_used_at = ${now}, idle_expires_at = ${idleExpiresAt}, ip = ${ip} where id = ${id}`;
}

export async function revokeSession(db: Db, id: string, reason: string, now: Date): Promise<void> {
  await db`update sessions set revoked_at = ${now}, revoked_reason = ${reason} where id = ${id} and revoked_at is null`;
}

/** Revokes the session only if it belongs to the user: another person's id changes nothing. */
export async function revokeOwnSession(db: Db, userId: string, id: string, reason: string, now: Date): Promise<void> {
  await db`
    update sessions set revoked_at = ${now}, revoked_reason = ${reason}
    where id = ${id} and user_id = ${userId} and revoked_at is null`;
}

export async function revokeUserSessions(
  db: Db,
  userId: string,
  reason: string,
  now: Date,
  keepSessionId: string | null = null,
): Promise<void> {
  await db`
    update sessions set revoked_at = ${now}, revoked_reason = ${reason}
    where user_id = ${userId} and revoked_at is null and id is distinct from ${keepSessionId}`;
}

export async function listLiveSessions(db: Db, userId: string, now: Date): Promise<SessionRow[]> {
  return db<SessionRow[]>`
    select id, user_id, created_at, last_used_at, absolute_expires_at, idle_expires_at, user_agent, ip, revoked_at,
           elevation_epoch
    from sessions
    where user_id = ${userId} and revoked_at is null and absolute_expires_at > ${now} and idle_expires_at > ${now}
    order by last_used_at desc, id`;
}

export async function createEmailToken(
  db: Db,
  input: { userId: string; purpose: 'verify_email' | 'password_reset'; digest: Buffer; expiresAt: Date },
  now: Date,
): Promise<void> {
  await db`
    insert into email_tokens (id, user_id, purpose, token_digest, created_at, expires_at)
    values (${randomUUID()}, ${input.userId}, ${input.purpose}, ${input.digest}, ${now}, ${input.expiresAt})`;
}

/** Spends a live token of that purpose; undefined for unknown, expired or spent alike. */
export async function spendEmailToken(
  db: Db,
  purpose: 'verify_email' | 'password_reset',
  digest: Buffer,
  now: Date,
): Promise<{ user_id: string } | undefined> {
  const [row] = await db<{ user_id: string }[]>`
    update email_tokens set used_at = ${now}
    where token_digest = ${digest} and purpose = ${purpose} and used_at is null and expires_at > ${now}
    returning user_id`;
  return row;
}

/** A new reset link makes the older ones of the same account useless. */
export async function expireEmailTokens(db: Db, userId: string, purpose: string, now: Date): Promise<void> {
  await db`
    update email_tokens set used_at = ${now}
    where user_id = ${userId} and purpose = ${purpose} and used_at is null`;
}

export interface PendingSignupRow {
  email: string;
  password_hash: string;
  name: string | null;
  language: string;
  link_base: string;
}

export async function insertPendingSignup(
  db: Db,
  input: { id: string; email: string; passwordHash: string; name: string | null; language: string; base: string },
  now: Date,
): Promise<void> {
  await db`
    insert into pending_signups (id, email, password_hash, name, language, link_base, created_at)
    values (${input.id}, ${input.email}, ${input.passwordHash}, ${input.name}, ${input.language}, ${input.base}, ${now})`;
}

/** Deletes and answers the pending sign-up, or undefined when another run took it. */
export async function takePendingSignup(db: Db, id: string): Promise<PendingSignupRow | undefined> {
  const [row] = await db<PendingSignupRow[]>`
    delete from pending_signups where id = ${id}
    returning email, password_hash, name, language, link_base`;
  return row;
}

/** Ends the session's elevation: every elevated token of it so far stops being elevated. */
export async function endElevation(db: Db, sessionId: string): Promise<void> {
  await db`update sessions set elevation_epoch = elevation_epoch + 1 where id = ${sessionId}`;
}
