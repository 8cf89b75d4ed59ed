// All SQL of the staff route for users' system permissions.
import type { Db } from '../../db/client.js';

/** Replaces the user's permissions; undefined for an unknown or deleted user. */
export async function setSystemPermissions(
  db: Db,
  userId: string,
  permissions: string[],
  now: Date,
): Promise<{ id: string; system_permissions: string[] } | undefined> {
  const [row] = await db<{ id: string; system_permissions: string[] }[]>`
    update users set system_permissions = ${permissions}::text[], updated_at = ${now}
    where id = ${userId} and deleted_at is null
    returning id, system_permissions`;
  return row;
}
