// All SQL of organization members (document 1, "Membership", "Members"). Callers that change
// memberships hold the organization's lock (requireMembership with `lock`), so owner counts read here
// cannot change under them.
import type { Role } from '../../authz/roles.js';
import type { Db } from '../../db/client.js';

export interface MemberRow {
  created_at: Date;
  name: string;
  organization_id: string;
  user_id: string;
  role: Role;
  avatar_asset_id: string | null;
  email: string | null;
  /** Added directly by id: the address is shown to the member alone (mappers.ts). */
  added_by_id: boolean;
}

const COLUMNS = 'm.created_at, u.name, m.organization_id, m.user_id, m.role, u.avatar_asset_id, u.email, m.added_by_id';

/** Owners first, then by when they joined. */
export async function listMembers(db: Db, organizationId: string): Promise<MemberRow[]> {
  return db<MemberRow[]>`
    select ${db.unsafe(COLUMNS)}
    from organization_members m join users u on u.id = m.user_id
    where m.organization_id = ${organizationId}
    order by m.role <> 'owner', m.created_at, m.user_id`;
}

export async function findMember(db: Db, organizationId: string, userId: string): Promise<MemberRow | undefined> {
  const [row] = await db<MemberRow[]>`
    select ${db.unsafe(COLUMNS)}
    from organization_members m join users u on u.id = m.user_id
    where m.organization_id = ${organizationId} and m.user_id = ${userId}`;
  return row;
}

/** The account with this id, if it exists and is not deleted: its address, for the re-invite cool-down. */
export async function findUser(db: Db, userId: string): Promise<{ email: string | null } | undefined> {
  const [row] = await db<{ email: string | null }[]>`select email from users where id = ${userId} and deleted_at is null`;
  return row;
}

export async function addMember(
  db: Db,
  organizationId: string,
  userId: string,
  role: Role,
  now: Date,
  addedById = false,
): Promise<MemberRow> {
  await db`
    insert into organization_members (organization_id, user_id, role, created_at, added_by_id)
    values (${organizationId}, ${userId}, ${role}, ${now}, ${addedById})`;
  return (await findMember(db, organizationId, userId))!;
}

export async function setRole(db: Db, organizationId: string, userId: string, role: Role): Promise<MemberRow> {
  await db`update organization_members set role = ${role} where organization_id = ${organizationId} and user_id = ${userId}`;
  return (await findMember(db, organizationId, userId))!;
}

export async function removeMember(db: Db, organizationId: string, userId: string): Promise<void> {
  await db`delete from organization_members where organization_id = ${organizationId} and user_id = ${userId}`;
}

export async function countOwners(db: Db, organizationId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from organization_members where organization_id = ${organizationId} and role = 'owner'`;
  return row!.n;
}
