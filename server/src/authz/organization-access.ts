// Resolving the caller's role in an organization, and refusing: a non-member sees 404 exactly as for
// an unknown id (seed "Anti-enumeration"); a member without the permission sees 403.
import type { Db } from '../db/client.js';
import { forbidden, notFound } from '../http/errors.js';
import { reachesOrganization, type Reach } from './reach.js';
import { can, type Permission, type Role } from './roles.js';

/** A user-acting caller as the access checks need it (any UserAuth is one). */
export interface Accessor {
  userId: string;
  reach: Reach;
}

export const organizationNotFound = () => notFound('No such organization.');
/** A member whose role lacks the permission: they know the organization, so they may be told. */
export const roleForbids = (role: Role) => forbidden(`Your role (${role}) may not do this here.`);

export interface OrganizationRow {
  id: string;
  name: string;
  slug: string;
  personal_owner_id: string | null;
  billing_country_code: string | null;
  icon_asset_id: string | null;
  created_at: Date;
}

export interface Membership {
  organization: OrganizationRow;
  role: Role;
}

const ORGANIZATION_COLUMNS = 'o.id, o.name, o.slug, o.personal_owner_id, o.billing_country_code, o.icon_asset_id, o.created_at';

/** The organization with the caller's role, or undefined when absent or the caller is not a member. */
export async function findMembership(
  db: Db,
  organizationId: string,
  userId: string,
  options: { lock?: boolean } = {},
): Promise<Membership | undefined> {
  const [row] = await db<(OrganizationRow & { role: Role })[]>`
    select ${db.unsafe(ORGANIZATION_COLUMNS)}, m.role
    from organizations o join organization_members m on m.organization_id = o.id and m.user_id = ${userId}
    where o.id = ${organizationId}
    ${options.lock ? db`for update of o` : db``}`;
  if (!row) return undefined;
  const { role, ...organization } = row;
  if (!options.lock) return { organization, role };
  // The locking statement returns the membership row from its own snapshot, taken before it waited
  // for the lock: a change committed meanwhile (the caller demoted or removed) is not in it. Under
  // READ COMMITTED the next statement sees it, so the role is read again now that the lock is held.
  const [fresh] = await db<{ role: Role }[]>`
    select role from organization_members where organization_id = ${organizationId} and user_id = ${userId}`;
  return fresh ? { organization, role: fresh.role } : undefined;
}

/**
 * The caller's membership, checked for `permission` and for the caller's reach (an API token scoped
 * elsewhere sees the 404 of an unknown id). With `lock`, the organization row is locked for the
 * caller's transaction: every membership change takes this lock first, so rules that count owners are
 * decided one change at a time.
 */
export async function requireMembership(
  db: Db,
  organizationId: string,
  caller: Accessor,
  permission: Permission,
  options: { lock?: boolean } = {},
): Promise<Membership> {
  if (!reachesOrganization(caller.reach, organizationId)) throw organizationNotFound();
  const membership = await findMembership(db, organizationId, caller.userId, options);
  if (!membership) throw organizationNotFound();
  if (!can(membership.role, permission)) throw roleForbids(membership.role);
  return membership;
}
