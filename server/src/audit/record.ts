// Recording an organization audit entry, in the transaction of the write it describes, so the entry
// exists if and only if the write committed (document 1, "Audit entry").
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/client.js';
import type { RequestContext, UserAuth } from '../http/handler.js';

export interface AuditActor {
  userId: string | null;
  /** The personal API token used, the application, and the user an application acted as. */
  tokenId?: string | null;
  applicationId?: string | null;
  actingAsUserId?: string | null;
}

/** Who did it: the signed-in user, their API token, or an application acting as them. */
export function actorOf(auth: UserAuth): AuditActor {
  switch (auth.kind) {
    case 'session':
      return { userId: auth.userId };
    case 'token':
      return { userId: auth.userId, tokenId: auth.tokenId };
    case 'acting_as':
      return { userId: null, applicationId: auth.applicationId, actingAsUserId: auth.userId };
  }
}

export interface AuditInput {
  organizationId: string;
  /** `<area>.<event>`: `organization.updated`, `member.added`, `project.created`, ... */
  action: string;
  target: { type: string; id: string | null };
  projectId?: string | null;
  serviceInstanceId?: string | null;
}

export async function recordAudit(db: Db, ctx: RequestContext, actor: AuditActor, entry: AuditInput): Promise<void> {
  await recordAuditOf(db, { requestId: ctx.requestId, at: ctx.clock.now() }, actor, entry);
}

/**
 * An entry for a write that ends after its request (an operation's success): recorded in the
 * transaction that records that success, under the id of the request that asked for it.
 */
export async function recordAuditOf(
  db: Db,
  origin: { requestId: string | null; at: Date },
  actor: AuditActor,
  entry: AuditInput,
): Promise<void> {
  await db`
    insert into audit_entries (id, organization_id, actor_user_id, actor_token_id, actor_application_id,
                               acting_as_user_id, action, target_type, target_id, project_id, service_instance_id,
                               request_id, created_at)
    values (${randomUUID()}, ${entry.organizationId}, ${actor.userId}, ${actor.tokenId ?? null},
            ${actor.applicationId ?? null}, ${actor.actingAsUserId ?? null}, ${entry.action}, ${entry.target.type},
            ${entry.target.id}, ${entry.projectId ?? null}, ${entry.serviceInstanceId ?? null}, ${origin.requestId},
            ${origin.at})`;
}

/** Platform-internal events: a table of their own, which the organization audit list never reads. */
export async function recordPlatformEvent(
  db: Db,
  ctx: RequestContext,
  event: { organizationId?: string | null; action: string; target?: { type: string; id: string | null }; details?: unknown },
): Promise<void> {
  await db`
    insert into platform_events (id, organization_id, action, target_type, target_id, details, request_id, created_at)
    values (${randomUUID()}, ${event.organizationId ?? null}, ${event.action}, ${event.target?.type ?? null},
            ${event.target?.id ?? null}, ${event.details === undefined ? null : db.json(event.details as never)},
            ${ctx.requestId}, ${ctx.clock.now()})`;
}
