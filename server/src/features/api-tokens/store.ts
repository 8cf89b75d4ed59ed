import type { GrantRow } from '../../authz/reach.js';
import type { Db } from '../../db/client.js';

export interface ApiTokenRow {
  id: string;
  name: string;
  grants: { grants: GrantRow[] } | null;
  admin_authorized: boolean;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
}

const COLUMNS = 'id, name, grants, admin_authorized, created_at, expires_at, last_used_at';

/** The user's live tokens, newest first (revoked ones never; expired ones until revoked). */
export function listTokens(db: Db, userId: string): Promise<ApiTokenRow[]> {
  return db<ApiTokenRow[]>`
    select ${db.unsafe(COLUMNS)} from api_tokens
    where user_id = ${userId} and revoked_at is null
    order by created_at desc, id desc`;
}

export async function insertToken(
  db: Db,
  token: { id: string; userId: string; name: string; digest: Buffer; grants: GrantRow[]; adminAuthorized: boolean; expiresAt: Date | null },
  now: Date,
): Promise<ApiTokenRow> {
  const [row] = await db<ApiTokenRow[]>`
    insert into api_tokens (id, user_id, name, secret_digest, grants, admin_authorized, created_at, expires_at)
    values (${token.id}, ${token.userId}, ${token.name}, ${token.digest}, ${db.json({ grants: token.grants } as never)},
            ${token.adminAuthorized}, ${now}, ${token.expiresAt})
    returning ${db.unsafe(COLUMNS)}`;
  return row!;
}

/** Revokes the user's own live token in one statement; false for anything else. */
export async function revokeToken(db: Db, userId: string, tokenId: string, now: Date): Promise<boolean> {
  const rows = await db`
    update api_tokens set revoked_at = ${now}
    where id = ${tokenId} and user_id = ${userId} and revoked_at is null
    returning id`;
  return rows.length === 1;
}

/** Which of these organizations and projects the user belongs to (a project through its organization). */
export async function memberScopes(
  db: Db,
  userId: string,
  organizationIds: string[],
  projectIds: string[],
): Promise<{ organizations: Set<string>; projects: Set<string> }> {
  const rows = await db<{ kind: 'organization' | 'project'; id: string }[]>`
    select 'organization' as kind, m.organization_id as id from organization_members m
    where m.user_id = ${userId} and m.organization_id = any(${organizationIds}::uuid[])
    union all
    select 'project', p.id from projects p
    join organization_members m on m.organization_id = p.organization_id and m.user_id = ${userId}
    where p.id = any(${projectIds}::uuid[])`;
  return {
    organizations: new Set(rows.filter((r) => r.kind === 'organization').map((r) => r.id)),
    projects: new Set(rows.filter((r) => r.kind === 'project').map((r) => r.id)),
  };
}

export async function systemPermissionsOf(db: Db, userId: string): Promise<string[]> {
  const [row] = await db<{ system_permissions: string[] }[]>`
    select system_permissions from users where id = ${userId} and deleted_at is null`;
  return row?.system_permissions ?? [];
}
