// Organization members (document 1, "Members"). Every change takes the organization's lock first
// (requireMembership with `lock`), so the last-owner rules are decided one change at a time: two
// concurrent demotions or removals of the last two Owners leave one.
import { actorOf, recordAudit } from '../../audit/record.js';
import { requireMembership, type Membership } from '../../authz/organization-access.js';
import { can, outranks, type Role } from '../../authz/roles.js';
import type { Db } from '../../db/client.js';
import { ApiError, forbidden, notFound, unprocessable } from '../../http/errors.js';
import type { AreaHandlers } from '../../http/handler.js';
import { refuseDuringCooldown } from '../invitations/cooldown.js';
import { toMembership } from './mappers.js';
import * as store from './store.js';

const outranksCaller = (detail: string) => new ApiError(403, 'member-outranks-caller', detail);
const personalOwner = (detail: string) => unprocessable('member-personal-organization', detail);
const memberNotFound = () => notFound('No such member.');

/** Refuses a change that would leave the organization without an Owner. */
async function keepAnOwner(db: Db, caller: Membership, target: store.MemberRow, verb: string): Promise<void> {
  if (target.role === 'owner' && (await store.countOwners(db, caller.organization.id)) === 1) {
    throw unprocessable('last-owner', `The last Owner cannot be ${verb}; make another member Owner first.`);
  }
}

const memberTarget = (userId: string) => ({ type: 'member', id: userId });

export const memberHandlers: AreaHandlers<'memberList' | 'memberAdd' | 'memberUpdate' | 'memberRemove'> = {
  async memberList({ path, auth, ctx }) {
    await requireMembership(ctx.sql, path.id, auth, 'members.read');
    const rows = await store.listMembers(ctx.sql, path.id);
    return { status: 200, body: rows.map((m) => toMembership(m, auth.userId)) };
  },

  async memberAdd({ path, body, auth, ctx }) {
    const role: Role = body.role ?? 'member';
    const member = await ctx.sql.begin(async (tx) => {
      const caller = await requireMembership(tx, path.id, auth, 'members.manage', { lock: true });
      if (caller.organization.personal_owner_id !== null) throw personalOwner('A personal organization takes no members.');
      if (outranks(role, caller.role)) throw outranksCaller(`You cannot grant a role above your own (${caller.role}).`);
      const user = await store.findUser(tx, body.user_id);
      if (!user) throw notFound('No such user.');
      // Adding someone already a member answers the membership as it is (seed "Members").
      const existing = await store.findMember(tx, path.id, body.user_id);
      if (existing) return existing;
      const now = ctx.clock.now();
      // A decline of this organization's invitation holds a direct add back too (DECISIONS.md §7).
      if (user.email) await refuseDuringCooldown(tx, path.id, user.email, now, 'id');
      const added = await store.addMember(tx, path.id, body.user_id, role, now, true);
      await recordAudit(tx, ctx, actorOf(auth), {
        organizationId: caller.organization.id,
        action: 'member.added',
        target: memberTarget(added.user_id),
      });
      return added;
    });
    return { status: 200, body: toMembership(member, auth.userId) };
  },

  async memberUpdate({ path, body, auth, ctx }) {
    const member = await ctx.sql.begin(async (tx) => {
      const caller = await requireMembership(tx, path.id, auth, 'members.manage', { lock: true });
      const target = await store.findMember(tx, path.id, path.user_id);
      if (!target) throw memberNotFound();
      if (outranks(target.role, caller.role)) throw outranksCaller(`This member's role is above yours (${caller.role}).`);
      if (outranks(body.role, caller.role)) throw outranksCaller(`You cannot grant a role above your own (${caller.role}).`);
      if (target.role === body.role) return target;
      if (caller.organization.personal_owner_id === target.user_id) {
        throw personalOwner("The owner of a personal organization keeps the Owner role.");
      }
      await keepAnOwner(tx, caller, target, 'demoted');
      const updated = await store.setRole(tx, path.id, target.user_id, body.role);
      await recordAudit(tx, ctx, actorOf(auth), {
        organizationId: caller.organization.id,
        action: 'member.role_changed',
        target: memberTarget(target.user_id),
      });
      return updated;
    });
    return { status: 200, body: toMembership(member, auth.userId) };
  },

  async memberRemove({ path, auth, ctx }) {
    await ctx.sql.begin(async (tx) => {
      // Any member may get this far: a caller may always remove themselves (seed "Members").
      const caller = await requireMembership(tx, path.id, auth, 'members.read', { lock: true });
      const self = path.user_id.toLowerCase() === auth.userId;
      if (!self && !can(caller.role, 'members.manage')) {
        throw forbidden(`Your role (${caller.role}) may not remove other members.`);
      }
      const target = await store.findMember(tx, path.id, path.user_id);
      if (!target) throw memberNotFound();
      if (caller.organization.personal_owner_id === target.user_id) {
        throw personalOwner('The owner of a personal organization cannot leave it; it goes with the account.');
      }
      if (!self && outranks(target.role, caller.role)) {
        throw outranksCaller(`This member's role is above yours (${caller.role}).`);
      }
      await keepAnOwner(tx, caller, target, 'removed');
      await store.removeMember(tx, path.id, target.user_id);
      await recordAudit(tx, ctx, actorOf(auth), {
        organizationId: caller.organization.id,
        action: 'member.removed',
        target: memberTarget(target.user_id),
      });
    });
    return { status: 204 };
  },
};
