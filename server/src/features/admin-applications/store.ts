import type { Db } from '../../db/client.js';

export interface ApplicationRow {
  id: string;
  name: string;
  capabilities: string[];
  created_at: Date;
  token_rotated_at: Date;
}

const COLUMNS = 'id, name, capabilities, created_at, token_rotated_at';

export async function insertApplication(
  db: Db,
  app: { id: string; name: string; capabilities: string[]; digest: Buffer; createdBy: string },
  now: Date,
): Promise<ApplicationRow> {
  const [row] = await db<ApplicationRow[]>`
    insert into applications (id, name, capabilities, token_digest, token_rotated_at, created_by, created_at)
    values (${app.id}, ${app.name}, ${app.capabilities}, ${app.digest}, ${now}, ${app.createdBy}, ${now})
    returning ${db.unsafe(COLUMNS)}`;
  return row!;
}

/** Replaces the token's digest: the previous token stops working with this statement. */
export async function replaceToken(db: Db, id: string, digest: Buffer, now: Date): Promise<boolean> {
  const rows = await db`update applications set token_digest = ${digest}, token_rotated_at = ${now} where id = ${id} returning id`;
  return rows.length === 1;
}
