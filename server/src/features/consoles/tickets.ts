// Minting a gateway ticket (DECISIONS.md §6): the row recording its single redemption and the signed
// token naming it, written in the caller's transaction together with the ticket's audit entry, so no
// ticket is handed out whose entry did not commit (document 2 §4: "an audit entry before the credential
// is handed over").
import { randomUUID } from 'node:crypto';
import { actorOf, recordAudit } from '../../audit/record.js';
import type { SigningKey } from '../../auth/crypto/signing-keys.js';
import type { Db } from '../../db/client.js';
import type { RequestContext, UserAuth } from '../../http/handler.js';
import { signTicket, TICKET_TTL_SECONDS, ticketUrl, type TicketPurpose } from '../../gateway/tickets.js';
import type { ServiceAccessRow } from '../services/store.js';
import { insertTicket } from './store.js';

/**
 * The key that signs tickets now, read before the minting transaction begins: the ring reads it with a
 * connection of the pool, and a transaction that waited for one while holding its own (and a screen
 * hold's row lock others wait on) could starve the pool under a burst of requests.
 */
export function ticketSigningKey(ctx: RequestContext): Promise<SigningKey> {
  return ctx.ticketKeys.currentSigningKey(ctx.clock.now());
}

export interface MintedTicket {
  id: string;
  url: string;
  /** The signed token itself (file tickets hand it over with the gateway's base URL). */
  token: string;
  expiresAt: Date;
}

export async function mintTicket(
  tx: Db,
  ctx: RequestContext,
  auth: UserAuth,
  key: SigningKey,
  input: {
    purpose: TicketPurpose;
    access: ServiceAccessRow;
    resourceId: string;
    details?: Record<string, unknown>;
    /** The file a download ticket opens, signed into the ticket. */
    path?: string;
    /** The audit action, `<purpose>.ticket_issued`. */
    action: string;
  },
): Promise<MintedTicket> {
  const now = ctx.clock.now();
  const id = randomUUID();
  const expiresAt = new Date(now.getTime() + TICKET_TTL_SECONDS[input.purpose] * 1000);
  await insertTicket(tx, {
    id,
    purpose: input.purpose,
    service_instance_id: input.access.service.id,
    resource_id: input.resourceId,
    user_id: auth.userId,
    session_id: auth.kind === 'session' ? auth.sessionId : null,
    token_id: auth.kind === 'token' ? auth.tokenId : null,
    delegation_id: auth.kind === 'acting_as' ? auth.delegationId : null,
    details: input.details ?? {},
    created_at: now,
    expires_at: expiresAt,
  });
  await recordAudit(tx, ctx, actorOf(auth), {
    organizationId: input.access.organization_id,
    action: input.action,
    target: { type: 'resource', id: input.resourceId },
    projectId: input.access.service.project_id,
    serviceInstanceId: input.access.service.id,
  });
  const token = await signTicket(
    key,
    {
      id,
      purpose: input.purpose,
      resourceId: input.resourceId,
      userId: auth.userId,
      expiresAt,
      ...(input.path === undefined ? {} : { path: input.path }),
    },
    now,
  );
  return { id, url: ticketUrl(ctx.config.gatewayPublicUrl, input.purpose, token), token, expiresAt };
}
