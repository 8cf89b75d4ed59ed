// All SQL of the SFTP account routes (migration 0026). The gateway's own reads are in
// server/src/gateway/sftp/store.ts.
import type { Db } from '../../db/client.js';

export interface SftpAccountRow {
  service_instance_id: string;
  username: string;
  enabled: boolean;
  password_set: boolean;
  generation: string;
}

const FIELDS = (db: Db) =>
  db`service_instance_id, username, enabled, password_digest is not null as password_set, generation::text`;

export async function findAccount(db: Db, serviceId: string): Promise<SftpAccountRow | undefined> {
  const [row] = await db<SftpAccountRow[]>`
    select ${FIELDS(db)} from sftp_accounts where service_instance_id = ${serviceId}`;
  return row;
}

/**
 * The account under its row lock, refusing to wait: a change already holding it is another write in
 * progress (PostgreSQL's lock_not_available, 55P03, which the caller answers as 409).
 */
export async function lockAccount(db: Db, serviceId: string): Promise<SftpAccountRow | undefined> {
  const [row] = await db<SftpAccountRow[]>`
    select ${FIELDS(db)} from sftp_accounts where service_instance_id = ${serviceId} for update nowait`;
  return row;
}

/** Provisions the account; undefined when another request made it first (that one is in progress). */
export async function insertAccount(
  db: Db,
  row: { serviceId: string; username: string; enabled: boolean; passwordDigest: string | null; now: Date },
): Promise<SftpAccountRow | undefined> {
  const [made] = await db<SftpAccountRow[]>`
    insert into sftp_accounts (service_instance_id, username, enabled, password_digest, created_at, updated_at)
    values (${row.serviceId}, ${row.username}, ${row.enabled}, ${row.passwordDigest}, ${row.now}, ${row.now})
    on conflict (service_instance_id) do nothing
    returning ${FIELDS(db)}`;
  return made;
}

/** Changes the account; the generation moves so sessions signed in before end. */
export async function updateAccount(
  db: Db,
  serviceId: string,
  change: { enabled?: boolean; passwordDigest?: string },
  now: Date,
): Promise<SftpAccountRow> {
  const [row] = await db<SftpAccountRow[]>`
    update sftp_accounts set
      enabled = coalesce(${change.enabled ?? null}::boolean, enabled),
      password_digest = coalesce(${change.passwordDigest ?? null}::text, password_digest),
      generation = generation + 1,
      updated_at = ${now}
    where service_instance_id = ${serviceId}
    returning ${FIELDS(db)}`;
  return row!;
}

export async function productFeatures(db: Db, productId: string): Promise<string[]> {
  const [row] = await db<
    { features: string[] }[]
  >`select features from catalog_products where id = ${productId}`;
  return row?.features ?? [];
}
