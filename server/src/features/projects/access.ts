// Resolving a project for the caller: a project of an organization the caller is not in answers 404
// exactly as an unknown id (seed "Authentication", anti-enumeration); a member whose role lacks the
// permission gets 403.
import { findMembership, roleForbids, type Accessor } from '../../authz/organization-access.js';
import { reachesProject } from '../../authz/reach.js';
import { can, type Permission } from '../../authz/roles.js';
import type { Db } from '../../db/client.js';
import { ApiError, notFound, unprocessable } from '../../http/errors.js';
import { findProjectAccess, lockProject, type ProjectAccess } from './store.js';

export const projectNotFound = () => notFound('No such project.');

export const projectSlugReserved = (slug: string) =>
  unprocessable('project-slug-reserved', `The slug "${slug}" is reserved in a personal organization.`);

export const projectGamingManaged = () =>
  new ApiError(
    403,
    'project-gaming-managed',
    'The games project of a personal organization is managed by the platform; it cannot be changed or deleted.',
  );

/** The project for reading: one statement. */
export async function readableProject(
  db: Db,
  projectId: string,
  caller: Accessor,
  permission: Permission,
): Promise<ProjectAccess> {
  const access = await findProjectAccess(db, projectId, caller.userId);
  if (!access || !reachesProject(caller.reach, access.project.organization_id, projectId)) throw projectNotFound();
  if (!can(access.role, permission)) throw roleForbids(access.role);
  return access;
}

/**
 * The project for a write, in the caller's transaction. The organization is locked first, as every
 * membership change and the organization's delete lock it, so the role checked is the current one and
 * stays so until the write commits; then the project row is locked and read fresh.
 */
export async function writableProject(
  db: Db,
  projectId: string,
  caller: Accessor,
  permission: Permission,
): Promise<ProjectAccess> {
  const seen = await findProjectAccess(db, projectId, caller.userId);
  if (!seen || !reachesProject(caller.reach, seen.project.organization_id, projectId)) throw projectNotFound();
  const membership = await findMembership(db, seen.project.organization_id, caller.userId, { lock: true });
  if (!membership) throw projectNotFound();
  if (!can(membership.role, permission)) throw roleForbids(membership.role);
  const project = await lockProject(db, projectId);
  if (!project) throw projectNotFound();
  return { project, role: membership.role, personal: membership.organization.personal_owner_id !== null };
}
