// Staff permissions (DECISIONS.md §3 "System permissions"): read from the account on every staff
// request, so a revocation takes effect on the next one. The /admin/ elevation check comes first, in
// http/bind.ts.
import type { Db } from '../db/client.js';
import { forbidden } from '../http/errors.js';
import type { SystemPermission } from './system-permissions.js';

export async function requireSystemPermission(db: Db, userId: string, permission: SystemPermission): Promise<void> {
  const [row] = await db<{ held: boolean }[]>`
    select ${permission} = any(system_permissions) as held from users where id = ${userId} and deleted_at is null`;
  if (!row?.held) throw forbidden(`This needs the ${permission} system permission.`);
}
