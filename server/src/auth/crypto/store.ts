// All SQL of the credential machinery: server secrets and signing keys (migration 0004).
import type { JWK } from 'jose';
import type { JSONValue } from 'postgres';
import type { Db } from '../../db/client.js';

// Serialises signing-key creation across processes (pg_advisory_xact_lock). An arbitrary constant of
// this application, distinct from the migration lock (db/migrate.ts).
const SIGNING_KEY_LOCK = 7_315_004_001;
const TICKET_KEY_LOCK = 7_315_020_001;

/** signing_keys sign access tokens; ticket_signing_keys the edge gateway's tickets (migration 0020). */
export type KeyTable = 'signing_keys' | 'ticket_signing_keys';

// --- server_secrets -------------------------------------------------------------------------------

/** Stores `value` under `name` unless a value is there already; the first writer wins. */
export async function insertSecretIfAbsent(db: Db, name: string, value: Buffer): Promise<void> {
  await db`insert into server_secrets (name, value) values (${name}, ${value}) on conflict (name) do nothing`;
}

export async function findSecret(db: Db, name: string): Promise<Buffer | undefined> {
  const [row]: [{ value: Buffer }?] = await db`select value from server_secrets where name = ${name}`;
  return row?.value;
}

// --- signing_keys ---------------------------------------------------------------------------------

export interface SigningKeyRow {
  kid: string;
  alg: 'EdDSA';
  public_jwk: JWK;
  /** Only on rows stored before private halves were sealed (migration 0005). */
  private_jwk: JWK | null;
  private_jwk_sealed: string | null;
  created_at: Date;
  retire_after: Date;
  expires_at: Date;
}

/**
 * The newest key that may still sign at `now`. No lower bound on created_at: a key made by a process
 * whose clock runs ahead must still be found, or this process would make a second one.
 */
export async function findCurrentSigningKey(
  db: Db,
  now: Date,
  table: KeyTable = 'signing_keys',
): Promise<SigningKeyRow | undefined> {
  const [row]: [SigningKeyRow?] = await db`
    select kid, alg, public_jwk, private_jwk, private_jwk_sealed, created_at, retire_after, expires_at from ${db(table)}
    where retire_after > ${now}
    order by created_at desc, kid
    limit 1`;
  return row;
}

/** A key by kid, whatever its age: the caller decides whether it still verifies. */
export async function findSigningKey(
  db: Db,
  kid: string,
  table: KeyTable = 'signing_keys',
): Promise<SigningKeyRow | undefined> {
  const [row]: [SigningKeyRow?] = await db`
    select kid, alg, public_jwk, private_jwk, private_jwk_sealed, created_at, retire_after, expires_at from ${db(table)}
    where kid = ${kid}`;
  return row;
}

export async function insertSigningKey(
  db: Db,
  row: SigningKeyRow,
  table: KeyTable = 'signing_keys',
): Promise<void> {
  await db`
    insert into ${db(table)} (kid, alg, public_jwk, private_jwk_sealed, created_at, retire_after, expires_at)
    values (${row.kid}, ${row.alg}, ${db.json(row.public_jwk as JSONValue)}, ${row.private_jwk_sealed},
      ${row.created_at}, ${row.retire_after}, ${row.expires_at})`;
}

/** Within a transaction: waits until no other process is creating a signing key. */
export async function lockSigningKeyCreation(db: Db, table: KeyTable = 'signing_keys'): Promise<void> {
  await db`select pg_advisory_xact_lock(${table === 'signing_keys' ? SIGNING_KEY_LOCK : TICKET_KEY_LOCK})`;
}

/** Removes keys that no longer verify anything; returns how many went. */
export async function deleteExpiredSigningKeys(
  db: Db,
  now: Date,
  table: KeyTable = 'signing_keys',
): Promise<number> {
  const rows = await db`delete from ${db(table)} where expires_at <= ${now} returning kid`;
  return rows.length;
}

/** Keys whose private half is still stored in the clear (written before migration 0005). */
export async function listUnsealedSigningKeys(db: Db): Promise<{ kid: string; private_jwk: JWK }[]> {
  return db<{ kid: string; private_jwk: JWK }[]>`
    select kid, private_jwk from signing_keys where private_jwk is not null and private_jwk_sealed is null`;
}

export async function sealSigningKey(db: Db, kid: string, sealed: string): Promise<void> {
  await db`update signing_keys set private_jwk_sealed = ${sealed}, private_jwk = null where kid = ${kid}`;
}
