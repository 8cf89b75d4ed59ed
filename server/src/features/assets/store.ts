// Who may read an owner-only asset. The assets themselves are read and written by public/store.ts.
import type { Db } from '../../db/client.js';

/** Whether the user belongs to the organization that owns an asset. */
export async function isOrganizationMember(db: Db, userId: string, organizationId: string): Promise<boolean> {
  const rows = await db`
    select 1 from organization_members where organization_id = ${organizationId} and user_id = ${userId}`;
  return rows.length === 1;
}
