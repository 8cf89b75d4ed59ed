// Granting and revoking system permissions (users.system_permissions) and listing staff; every change
// leaves a platform_events line naming the operator.
import { randomUUID } from 'node:crypto';
import { sortPermissions, type SystemPermission } from '../../server/src/authz/system-permissions.js';
import type { Sql } from '../../server/src/db/client.js';
import { AdminError } from './database.js';

export interface PermissionChange {
  userId: string;
  email: string;
  /** What this run changed: granted or revoked; empty when nothing changed. */
  changed: string[];
  /** What the user holds afterwards. */
  holds: string[];
}

export interface StaffMember {
  id: string;
  email: string;
  name: string;
  permissions: string[];
}

export async function changePermissions(
  sql: Sql,
  input: { kind: 'grant' | 'revoke'; email: string; permissions: SystemPermission[]; operator: string },
): Promise<PermissionChange> {
  return sql.begin(async (tx) => {
    const [user] = await tx<{ id: string; email: string; system_permissions: string[] }[]>`
      select id, email, system_permissions from users
      where email = ${input.email.toLowerCase()} and deleted_at is null
      for update`;
    if (!user) throw new AdminError(`no account with the address ${input.email}`);
    const held = new Set(user.system_permissions);
    const changed: string[] =
      input.kind === 'grant'
        ? input.permissions.filter((p) => !held.has(p))
        : input.permissions.filter((p) => held.has(p));
    if (changed.length === 0)
      return { userId: user.id, email: user.email, changed, holds: sortPermissions(held) };

    const holds =
      input.kind === 'grant'
        ? sortPermissions([...held, ...changed])
        : sortPermissions([...held].filter((p) => !changed.includes(p)));
    const now = new Date();
    await tx`update users set system_permissions = ${holds}, updated_at = ${now} where id = ${user.id}`;
    await tx`
      insert into platform_events (id, organization_id, action, target_type, target_id, details, request_id, created_at)
      values (${randomUUID()}, null, ${input.kind === 'grant' ? 'staff.permissions_granted' : 'staff.permissions_revoked'},
              'user', ${user.id}, ${tx.json({ permissions: changed, operator: input.operator })}, null, ${now})`;
    return { userId: user.id, email: user.email, changed, holds };
  });
}

export async function listStaff(sql: Sql): Promise<StaffMember[]> {
  const rows = await sql<{ id: string; email: string | null; name: string; system_permissions: string[] }[]>`
    select id, email, name, system_permissions from users
    where cardinality(system_permissions) > 0 and deleted_at is null
    order by email nulls last, id`;
  return rows.map((r) => ({
    id: r.id,
    email: r.email ?? '',
    name: r.name,
    permissions: sortPermissions(r.system_permissions),
  }));
}
