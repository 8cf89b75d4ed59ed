// The SQL of issuing certificates: the ACME account (migration 0032, its key sealed), the http-01
// challenges the ingress answers, and the issuance state of `http_names` rows (migration 0030).
import type { Db } from '../db/client.js';

export interface AcmeAccountRow {
  directory_url: string;
  account_key_sealed: string;
  account_url: string | null;
}

export async function findAcmeAccount(db: Db, directoryUrl: string): Promise<AcmeAccountRow | null> {
  const [row] = await db<AcmeAccountRow[]>`
    select directory_url, account_key_sealed, account_url from acme_accounts where directory_url = ${directoryUrl}`;
  return row ?? null;
}

/** The stored account of the directory: ours if none was there, else the one another process stored first. */
export async function insertAcmeAccount(
  db: Db,
  input: { directoryUrl: string; accountKeySealed: string },
  now: Date,
): Promise<AcmeAccountRow> {
  await db`
    insert into acme_accounts (directory_url, account_key_sealed, created_at)
    values (${input.directoryUrl}, ${input.accountKeySealed}, ${now})
    on conflict (directory_url) do nothing`;
  return (await findAcmeAccount(db, input.directoryUrl))!;
}

export async function setAcmeAccountUrl(db: Db, directoryUrl: string, accountUrl: string): Promise<void> {
  await db`update acme_accounts set account_url = ${accountUrl} where directory_url = ${directoryUrl}`;
}

export async function putChallenge(
  db: Db,
  input: { token: string; hostname: string; keyAuthorization: string },
  now: Date,
) {
  await db`
    insert into acme_challenges (token, hostname, key_authorization, created_at)
    values (${input.token}, ${input.hostname}, ${input.keyAuthorization}, ${now})
    on conflict (token) do update set hostname = excluded.hostname, key_authorization = excluded.key_authorization`;
}

export async function deleteChallenge(db: Db, token: string): Promise<void> {
  await db`delete from acme_challenges where token = ${token}`;
}

export interface HttpNameToCertify {
  id: string;
  hostname: string;
  status: 'pending' | 'active' | 'failed';
  attempts: number;
  next_attempt_at: Date | null;
}

/** The name's row, or null when it is gone. */
export async function findHttpName(db: Db, id: string): Promise<HttpNameToCertify | null> {
  const [row] = await db<HttpNameToCertify[]>`
    select id, hostname, status, attempts, next_attempt_at from http_names where id = ${id}`;
  return row ?? null;
}

/**
 * Claims the name for one attempt until `until`, unless another attempt holds it or one that just ended
 * left nothing due: true when this one may go on. One statement, so of two attempts racing one claims it.
 */
export async function claimAttempt(db: Db, id: string, now: Date, until: Date): Promise<boolean> {
  const rows = await db`
    update http_names set issuing_until = ${until}
    where id = ${id} and (issuing_until is null or issuing_until <= ${now})
      -- Still due: an attempt that just finished made the name active until its renewal.
      and (status = 'pending' or (status = 'active' and (next_attempt_at is null or next_attempt_at <= ${now})))
    returning id`;
  return rows.length > 0;
}

/** Ends the attempt's claim (only its own: a claim that expired and was taken again stays). */
export async function releaseAttempt(db: Db, id: string, until: Date): Promise<void> {
  await db`update http_names set issuing_until = null where id = ${id} and issuing_until = ${until}`;
}

/** Names whose next attempt (a retry, or the renewal of an active one) is due at `now`. */
export async function dueHttpNames(db: Db, now: Date, limit: number): Promise<{ id: string }[]> {
  return db<{ id: string }[]>`
    select id from http_names
    where status in ('pending', 'active') and (next_attempt_at is null or next_attempt_at <= ${now})
    order by next_attempt_at nulls first limit ${limit}`;
}

/** A failed attempt: why, and when the next is due (an active name keeps serving its certificate). */
export async function recordAttemptFailed(
  db: Db,
  input: { id: string; hostname: string; reason: string; nextAttemptAt: Date | null; failed: boolean },
  now: Date,
): Promise<void> {
  await db`
    update http_names set
      status = case when ${input.failed} then 'failed' else status end,
      status_reason = ${input.reason.slice(0, 500)}, attempts = attempts + 1,
      next_attempt_at = ${input.nextAttemptAt}, updated_at = ${now}
    where id = ${input.id} and hostname = ${input.hostname}`;
}

/**
 * Marks the name active with its next renewal due at `renewAt`, if the row is still there for this
 * name (detached meanwhile: false, and the caller stores nothing). Locks the row for the transaction.
 */
export async function markCertified(
  db: Db,
  input: { id: string; hostname: string; renewAt: Date },
  now: Date,
): Promise<boolean> {
  const rows = await db`
    update http_names set status = 'active', status_reason = null, attempts = 0, next_attempt_at = ${input.renewAt},
                          updated_at = ${now}
    where id = ${input.id} and hostname = ${input.hostname}
    returning id`;
  return rows.length > 0;
}
