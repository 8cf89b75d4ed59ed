// Staff permissions (DECISIONS.md §3 "System permissions"): read from the account on every staff
// request, so a revocation takes effect on the next one. Whether the account is staff at all, then the
// /admin/ elevation check, come first, in the gate (authorize.ts, fed by http/bind.ts).
import type { Db } from '../db/client.js';
import { forbidden } from '../http/errors.js';
import type { SystemPermission } from './system-permissions.js';

/** Whether the account holds any system permission (is staff), now. */
export async function holdsAnySystemPermission(db: Db, userId: string): Promise<boolean> {
  const [row] = await db<{ staff: boolean }[]>`
    select cardinality(system_permissions) > 0 as staff from users where id = ${userId} and deleted_at is null`;
  return row?.staff ?? false;
}

export async function requireSystemPermission(db: Db, userId: string, permission: SystemPermission): Promise<void> {
  const [row] = await db<{ held: boolean }[]>`
    select ${permission} = any(system_permissions) as held from users where id = ${userId} and deleted_at is null`;
  if (!row?.held) throw forbidden(`This needs the ${permission} system permission.`);
}
