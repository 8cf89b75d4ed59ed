// Invitations into an organization (document 1, "Invitations", "Invitation page", "Invitation status";
// DECISIONS.md §4). Owners and Admins invite, list and revoke under the organization's lock, by the
// members rules (no role above the inviter's, no personal organization). The invitee is whoever signs
// in with the invited address verified: to anyone else an invitation answers exactly as an unknown id.
// Every decision takes the organization's lock and then the invitation's, in that order, so accepting
// makes one membership once and an accept racing a decline or a revoke loses cleanly (no deadlock).
import { randomUUID } from 'node:crypto';
import { actorOf, recordAudit } from '../../audit/record.js';
import { requireMembership } from '../../authz/organization-access.js';
import { outranks, type Role } from '../../authz/roles.js';
import type { Db } from '../../db/client.js';
import { ApiError, conflict, invalidFieldValue, notFound, rateLimited, unprocessable } from '../../http/errors.js';
import type { AreaHandlers, RequestContext, SessionAuth, UserAuth } from '../../http/handler.js';
import { enqueueMail } from '../../mail/outbox.js';
import { hit, type Limit } from '../../ratelimit/limiter.js';
import { toMembership } from '../members/mappers.js';
import * as members from '../members/store.js';
import { toInvitation, toInvitationPage } from './mappers.js';
import {
  effectiveStatus,
  expiresAt,
  mailTime,
  type InvitationStatus,
} from './rules.js';
import { refuseDuringCooldown } from './cooldown.js';
import * as store from './store.js';

const outranksCaller = (detail: string) => new ApiError(403, 'member-outranks-caller', detail);
/** Unknown, and not addressed to the caller's verified address: one answer (seed "Invitations"). */
const invitationNotFound = () => notFound('No such invitation.');
const notPending = (status: InvitationStatus) =>
  unprocessable('invitation-not-pending', `This invitation is ${status}, no longer pending.`, status);

// One addr-spec, as the mail outbox accepts it: `format: email` lets through forms a mail header must not carry.
const BARE_ADDRESS = /^[^\s@,;:<>()[\]"\\]+@[^\s@,;:<>()[\]"\\]+$/;

const invitationTarget = (id: string) => ({ type: 'invitation', id });

/** The invitation addressed to the caller's verified address, or the 404 of an unknown id. */
async function inviteeInvitation(db: Db, id: string, auth: SessionAuth) {
  const seen = await store.findForInvitee(db, id, auth.userId);
  if (!seen) throw invitationNotFound();
  return seen;
}

/**
 * The caller's invitation, for deciding on it: the organization's lock first (as every membership
 * change and revoke take it, and the audit entry's reference to the organization needs a share of it,
 * so taking it later could deadlock), then the invitation's, read again under them: of two concurrent
 * decisions the second sees what the first committed.
 */
async function lockInviteeInvitation(tx: Db, id: string, auth: SessionAuth) {
  const seen = await inviteeInvitation(tx, id, auth);
  await store.lockOrganization(tx, seen.organization_id);
  const invitation = await store.lockInvitation(tx, id);
  if (!invitation) throw invitationNotFound();
  return invitation;
}

async function audit(
  tx: Db,
  ctx: RequestContext,
  auth: UserAuth,
  organizationId: string,
  action: string,
  target: { type: string; id: string },
): Promise<void> {
  await recordAudit(tx, ctx, actorOf(auth), { organizationId, action, target });
}

/** Each invitation mails an address the organization chose: bounded per organization (the seeds fix no number). */
const INVITATIONS_PER_ORGANIZATION: Limit = { name: 'invitation-create:organization', max: 50, windowSeconds: 60 * 60 };

export const invitationHandlers: AreaHandlers<
  | 'invitationList'
  | 'invitationCreate'
  | 'invitationRevoke'
  | 'invitationGet'
  | 'invitationAccept'
  | 'invitationDecline'
  | 'invitationAllowReinvite'
> = {
  async invitationList({ path, query, auth, ctx }) {
    await requireMembership(ctx.sql, path.id, auth, 'members.manage');
    const now = ctx.clock.now();
    const rows = await store.listInvitations(ctx.sql, path.id, query.status, now);
    return { status: 200, body: rows.map((r) => toInvitation(r, now)) };
  },

  async invitationCreate({ path, body, auth, ctx }) {
    const role: Role = body.role ?? 'member';
    const email = body.email.toLowerCase();
    if (!BARE_ADDRESS.test(email)) {
      throw invalidFieldValue('The address must be a plain email address.', [
        { location: 'body', pointer: '/email', message: 'must be a plain address such as ada@example.com' },
      ]);
    }
    const now = ctx.clock.now();
    const invitation = await ctx.sql.begin(async (tx) => {
      const caller = await requireMembership(tx, path.id, auth, 'members.manage', { lock: true });
      const organization = caller.organization;
      if (organization.personal_owner_id !== null) {
        throw unprocessable('member-personal-organization', 'A personal organization takes no members.');
      }
      if (outranks(role, caller.role))
        throw outranksCaller(`You cannot invite to a role above your own (${caller.role}).`);
      if (await store.isMemberAddress(tx, organization.id, email)) {
        throw conflict('already-a-member', 'A member of this organization already has this address.');
      }
      if (await store.hasPendingInvitation(tx, organization.id, email, now)) {
        throw conflict(
          'invitation-pending',
          'This address already has a pending invitation; revoke it to invite again.',
        );
      }
      await refuseDuringCooldown(tx, organization.id, email, now);
      // Counted in the transaction: a refused invitation (this one included) spends nothing.
      const limit = await hit(tx, INVITATIONS_PER_ORGANIZATION, organization.id, now);
      if (!limit.allowed) throw rateLimited(limit.retryAfterSeconds);
      const context = await store.mailContext(tx, auth.userId, email);
      const created = await store.insertInvitation(tx, {
        id: randomUUID(),
        organization_id: organization.id,
        email,
        role,
        inviter_user_id: auth.userId,
        inviter_name: context.inviter_name,
        created_at: now,
        expires_at: expiresAt(now),
      });
      await enqueueMail(
        tx,
        {
          to: email,
          kind: 'invitation',
          language: context.recipient_language,
          data: {
            link: `${ctx.config.dashboardUrl}/invitations/${created.id}`,
            organizationName: organization.name,
            inviterName: context.inviter_name,
            role,
            expiresAt: mailTime(created.expires_at),
          },
        },
        now,
      );
      await audit(tx, ctx, auth, organization.id, 'invitation.created', invitationTarget(created.id));
      return created;
    });
    return { status: 201, body: toInvitation(invitation, now) };
  },

  async invitationRevoke({ path, auth, ctx }) {
    const now = ctx.clock.now();
    await ctx.sql.begin(async (tx) => {
      const caller = await requireMembership(tx, path.id, auth, 'members.manage', { lock: true });
      const invitation = await store.lockOrganizationInvitation(tx, path.id, path.invitation_id);
      if (!invitation) throw invitationNotFound();
      if (outranks(invitation.role, caller.role)) {
        throw outranksCaller(`This invitation is to a role above yours (${caller.role}).`);
      }
      if (invitation.status === 'revoked') return;
      const status = effectiveStatus(invitation, now);
      if (status !== 'pending') throw notPending(status);
      await store.markRevoked(tx, invitation.id, now);
      await audit(tx, ctx, auth, path.id, 'invitation.revoked', invitationTarget(invitation.id));
    });
    return { status: 204 };
  },

  async invitationGet({ path, auth, ctx }) {
    const page = await inviteeInvitation(ctx.sql, path.id, auth);
    return { status: 200, body: toInvitationPage(page, ctx.clock.now()) };
  },

  async invitationAccept({ path, auth, ctx }) {
    const now = ctx.clock.now();
    const membership = await ctx.sql.begin(async (tx) => {
      const invitation = await lockInviteeInvitation(tx, path.id, auth);
      const status = effectiveStatus(invitation, now);
      if (status !== 'pending') throw notPending(status);
      await store.markAccepted(tx, invitation.id, auth.userId, now);
      await audit(
        tx,
        ctx,
        auth,
        invitation.organization_id,
        'invitation.accepted',
        invitationTarget(invitation.id),
      );
      // Someone already a member keeps the membership they have (as re-adding a member does).
      const existing = await members.findMember(tx, invitation.organization_id, auth.userId);
      if (existing) return existing;
      const added = await members.addMember(
        tx,
        invitation.organization_id,
        auth.userId,
        invitation.role,
        now,
      );
      await audit(tx, ctx, auth, invitation.organization_id, 'member.added', {
        type: 'member',
        id: auth.userId,
      });
      return added;
    });
    return { status: 200, body: toMembership(membership, auth.userId) };
  },

  async invitationDecline({ path, auth, ctx }) {
    const now = ctx.clock.now();
    await ctx.sql.begin(async (tx) => {
      const invitation = await lockInviteeInvitation(tx, path.id, auth);
      const status = effectiveStatus(invitation, now);
      if (status !== 'pending') throw notPending(status);
      await store.markDeclined(tx, invitation.id, now);
      await audit(
        tx,
        ctx,
        auth,
        invitation.organization_id,
        'invitation.declined',
        invitationTarget(invitation.id),
      );
    });
    return { status: 204 };
  },

  async invitationAllowReinvite({ path, auth, ctx }) {
    const now = ctx.clock.now();
    await ctx.sql.begin(async (tx) => {
      const invitation = await lockInviteeInvitation(tx, path.id, auth);
      if (invitation.status !== 'declined') {
        const status = effectiveStatus(invitation, now);
        throw unprocessable(
          'invitation-not-declined',
          `This invitation is ${status}; only a declined one holds re-invites back.`,
          status,
        );
      }
      if (invitation.reinvite_allowed_at !== null) return;
      await store.markReinviteAllowed(tx, invitation.id, now);
      await audit(
        tx,
        ctx,
        auth,
        invitation.organization_id,
        'invitation.reinvite_allowed',
        invitationTarget(invitation.id),
      );
    });
    return { status: 204 };
  },
};
