// Resolving a service instance for the caller. Every failure of access on a service-scoped route is the
// 404 of an unknown id, never a 403 (document 2 §5): a member whose role lacks the permission, a token
// out of reach, a share holder asking for more than the resource list, and a stranger all look alike.
import type { Accessor } from '../../authz/organization-access.js';
import type { DeferredSessionCheck } from '../../authz/deferred-session.js';
import type { UserAuth } from '../../http/handler.js';
import { reachesProject } from '../../authz/reach.js';
import { can, type Permission } from '../../authz/roles.js';
import type { Db } from '../../db/client.js';
import { serviceNotFound } from '../../authz/authorize.js';
import { unprocessable } from '../../http/errors.js';
import { findServiceAccess, type ServiceAccessRow } from './store.js';

export { serviceNotFound };

/**
 * Whether the customer may act on the service now: its subscription active and the service made
 * (running or stopped). Else 422 `subscription-not-serviceable` (DECISIONS.md §2), the caller's to throw.
 */
export function serviceable(access: Pick<ServiceAccessRow, 'service' | 'subscription_status'>): boolean {
  return (
    access.subscription_status === 'active' &&
    (access.service.status === 'running' || access.service.status === 'stopped')
  );
}

/** Throws 422 `subscription-not-serviceable` unless the service is serviceable (above). */
export function requireServiceable(access: Pick<ServiceAccessRow, 'service' | 'subscription_status'>): void {
  if (!serviceable(access)) {
    throw unprocessable(
      'subscription-not-serviceable',
      `The service cannot be changed now: its subscription is ${access.subscription_status} and the service ${access.service.status}.`,
    );
  }
}

async function isServiceStaff(db: Db, userId: string): Promise<boolean> {
  const [row] = await db<{ staff: boolean }[]>`
    select system_permissions && array['manage_services', 'view_all_orders']::text[] as staff
    from users where id = ${userId} and deleted_at is null`;
  return row?.staff ?? false;
}

export interface ServiceAccessOptions {
  /** Holders of a share of the service pass too (listing its resources, and nothing else). */
  shareHolders?: boolean;
  /** Lock the service row for the caller's transaction (operations are started under it). */
  lock?: boolean;
  /** Read this operation of the service too, in the same statement (the answer's `operation`). */
  operationId?: string;
}

export async function requireService(
  db: Db,
  where: { serviceId: string } | { subscriptionId: string },
  caller: Accessor & { kind: UserAuth['kind']; deferred?: DeferredSessionCheck },
  permission: Permission,
  options: ServiceAccessOptions = {},
): Promise<ServiceAccessRow> {
  const access = await findServiceAccess(db, where, caller.userId, {
    lock: options.lock,
    operationId: options.operationId,
    // A session whose check the request left to this statement (authz/deferred-session.ts).
    session: caller.deferred,
  });
  if (!access) throw serviceNotFound();
  const { service, organization_id: organizationId, role } = access;
  const inReach = reachesProject(caller.reach, organizationId, service.project_id);
  if (role !== null && inReach && can(role, permission)) return access;
  // A share is given to a person, not to one of their token's organizations: only a caller reaching
  // everywhere the user does (a session, an acting-as request, an `all` grant) uses it.
  if (options.shareHolders && access.shared && caller.reach.all) return access;
  // Staff who provision and run services read them all (the operation they started, what it made), in
  // their own session only: staff power never travels through a personal token or a delegation.
  if (
    permission === 'services.read' &&
    caller.kind === 'session' &&
    (await isServiceStaff(db, caller.userId))
  ) {
    return access;
  }
  throw serviceNotFound();
}
