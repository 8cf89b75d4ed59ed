import type { Db } from '../../db/client.js';

export interface DelegationRow {
  id: string;
  application_id: string;
  application_name: string;
  capabilities: string[];
  created_at: Date;
  updated_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export function listDelegations(db: Db, userId: string): Promise<DelegationRow[]> {
  return db<DelegationRow[]>`
    select d.id, d.application_id, a.name as application_name, d.capabilities, d.created_at, d.updated_at,
           d.last_used_at, d.revoked_at
    from application_delegations d join applications a on a.id = d.application_id
    where d.user_id = ${userId}
    order by d.created_at desc, d.id desc`;
}

/**
 * The user's delegation to the application, made or its scope replaced (a revoked one comes back to
 * life), in one statement: concurrent grants for the same pair end as one row. Undefined when the
 * application does not exist.
 */
export async function upsertDelegation(
  db: Db,
  input: { applicationId: string; userId: string; capabilities: string[]; id: string },
  now: Date,
): Promise<{ id: string } | undefined> {
  const [row] = await db<{ id: string }[]>`
    insert into application_delegations (id, application_id, user_id, capabilities, created_at, updated_at)
    select ${input.id}, a.id, ${input.userId}, ${input.capabilities}, ${now}, ${now}
    from applications a where a.id = ${input.applicationId}
    on conflict (application_id, user_id) do update
      set capabilities = excluded.capabilities, updated_at = excluded.updated_at, revoked_at = null
    returning id`;
  return row;
}

export async function revokeDelegation(db: Db, userId: string, id: string, now: Date): Promise<boolean> {
  const rows = await db`
    update application_delegations set revoked_at = ${now}
    where id = ${id} and user_id = ${userId} and revoked_at is null
    returning id`;
  return rows.length === 1;
}
