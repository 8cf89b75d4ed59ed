// All SQL of invitations (document 1, "Invitations", "Invitation page"). Every write runs under the
// organization's lock (taken first, as every membership change takes it), and each decision re-reads
// the invitation `for update` after it, so a concurrent accept, decline or revoke of the same
// invitation is decided on what the other committed.
import type { Role } from '../../authz/roles.js';
import type { Db } from '../../db/client.js';
import type { InvitationStatus, StoredStatus } from './rules.js';

export interface InvitationRow {
  id: string;
  organization_id: string;
  email: string;
  role: Role;
  status: StoredStatus;
  inviter_user_id: string | null;
  created_at: Date;
  expires_at: Date;
  accepted_at: Date | null;
  declined_at: Date | null;
  revoked_at: Date | null;
  reinvite_allowed_at: Date | null;
}

/** What the invitee's page shows (seed "Invitation page"): no email. */
export interface InvitationPageRow {
  id: string;
  organization_id: string;
  organization_name: string;
  organization_icon_asset_id: string | null;
  inviter_name: string;
  inviter_avatar_asset_id: string | null;
  role: Role;
  status: StoredStatus;
  created_at: Date;
  expires_at: Date;
}

const COLUMNS =
  'i.id, i.organization_id, i.email, i.role, i.status, i.inviter_user_id, i.created_at, i.expires_at, ' +
  'i.accepted_at, i.declined_at, i.revoked_at, i.reinvite_allowed_at';

/**
 * Pending (and not expired) first, then each group newest first; `status` narrows to one effective
 * status, `expired` being a pending invitation from its `expires_at` on.
 */
export async function listInvitations(
  db: Db,
  organizationId: string,
  status: InvitationStatus | undefined,
  now: Date,
): Promise<InvitationRow[]> {
  const filter =
    status === undefined
      ? db``
      : status === 'pending'
        ? db`and i.status = 'pending' and i.expires_at > ${now}`
        : status === 'expired'
          ? db`and i.status = 'pending' and i.expires_at <= ${now}`
          : db`and i.status = ${status}`;
  return db<InvitationRow[]>`
    select ${db.unsafe(COLUMNS)} from invitations i
    where i.organization_id = ${organizationId} ${filter}
    order by (i.status = 'pending' and i.expires_at > ${now}) desc, i.created_at desc, i.id`;
}

/** One invitation of this organization, locked for the caller's transaction. */
export async function lockOrganizationInvitation(
  db: Db,
  organizationId: string,
  id: string,
): Promise<InvitationRow | undefined> {
  const [row] = await db<InvitationRow[]>`
    select ${db.unsafe(COLUMNS)} from invitations i
    where i.id = ${id} and i.organization_id = ${organizationId}
    for update`;
  return row;
}

/** The invitation, locked; read again after the organization's lock so it holds what others committed. */
export async function lockInvitation(db: Db, id: string): Promise<InvitationRow | undefined> {
  const [row] = await db<
    InvitationRow[]
  >`select ${db.unsafe(COLUMNS)} from invitations i where i.id = ${id} for update`;
  return row;
}

/**
 * The invitation page, only when `userId`'s verified address is the invited one. One statement for
 * every case: an unknown id and someone else's invitation do the same work and answer the same nothing
 * (seed "Invitations": a masked refusal).
 */
export async function findForInvitee(
  db: Db,
  id: string,
  userId: string,
): Promise<InvitationPageRow | undefined> {
  const [row] = await db<InvitationPageRow[]>`
    select i.id, i.organization_id, o.name as organization_name, o.icon_asset_id as organization_icon_asset_id,
           coalesce(case when inviter.deleted_at is null then inviter.name end, i.inviter_name) as inviter_name,
           case when inviter.deleted_at is null then inviter.avatar_asset_id end as inviter_avatar_asset_id,
           i.role, i.status, i.created_at, i.expires_at
    from invitations i
    join organizations o on o.id = i.organization_id
    left join users inviter on inviter.id = i.inviter_user_id
    where i.id = ${id}
      and i.email = (select u.email from users u
                     where u.id = ${userId} and u.email_verified_at is not null and u.deleted_at is null)`;
  return row;
}

/** Whether a member of the organization has this address, verified. */
export async function isMemberAddress(db: Db, organizationId: string, email: string): Promise<boolean> {
  const rows = await db`
    select 1 from organization_members m join users u on u.id = m.user_id
    where m.organization_id = ${organizationId} and u.email = ${email} and u.email_verified_at is not null`;
  return rows.length > 0;
}

/** Whether the address has an invitation to the organization that is pending and not expired. */
export async function hasPendingInvitation(
  db: Db,
  organizationId: string,
  email: string,
  now: Date,
): Promise<boolean> {
  const rows = await db`
    select 1 from invitations
    where organization_id = ${organizationId} and email = ${email} and status = 'pending' and expires_at > ${now}`;
  return rows.length > 0;
}

/** Declined invitations of the address whose re-invite cool-down may still run (the caller judges which). */
export async function declinedSince(
  db: Db,
  organizationId: string,
  email: string,
  since: Date,
): Promise<Pick<InvitationRow, 'status' | 'declined_at' | 'reinvite_allowed_at'>[]> {
  return db`
    select status, declined_at, reinvite_allowed_at from invitations
    where organization_id = ${organizationId} and email = ${email} and status = 'declined' and declined_at > ${since}`;
}

/** The inviter's name, and the language of the account that has the address (if any), for the mail. */
export async function mailContext(
  db: Db,
  inviterId: string,
  email: string,
): Promise<{ inviter_name: string; recipient_language: string | null }> {
  const [row] = await db<{ inviter_name: string; recipient_language: string | null }[]>`
    select (select name from users where id = ${inviterId}) as inviter_name,
           (select language from users where email = ${email} and deleted_at is null) as recipient_language`;
  return row!;
}

export async function insertInvitation(
  db: Db,
  inv: Pick<
    InvitationRow,
    'id' | 'organization_id' | 'email' | 'role' | 'inviter_user_id' | 'created_at' | 'expires_at'
  > & {
    inviter_name: string;
  },
): Promise<InvitationRow> {
  const row = { ...inv, status: 'pending' as const };
  await db`
    insert into invitations ${db(row, 'id', 'organization_id', 'email', 'role', 'status', 'inviter_user_id', 'inviter_name', 'created_at', 'expires_at')}`;
  const { inviter_name: _name, ...stored } = row;
  return { ...stored, accepted_at: null, declined_at: null, revoked_at: null, reinvite_allowed_at: null };
}

/** Takes the organization's lock, as every membership change does first. */
export async function lockOrganization(db: Db, organizationId: string): Promise<boolean> {
  const rows = await db`select 1 from organizations where id = ${organizationId} for update`;
  return rows.length === 1;
}

export async function markRevoked(db: Db, id: string, now: Date): Promise<void> {
  await db`update invitations set status = 'revoked', revoked_at = ${now} where id = ${id}`;
}

export async function markAccepted(db: Db, id: string, userId: string, now: Date): Promise<void> {
  await db`update invitations set status = 'accepted', accepted_at = ${now}, accepted_by_user_id = ${userId} where id = ${id}`;
}

export async function markDeclined(db: Db, id: string, now: Date): Promise<void> {
  await db`update invitations set status = 'declined', declined_at = ${now} where id = ${id}`;
}

export async function markReinviteAllowed(db: Db, id: string, now: Date): Promise<void> {
  await db`update invitations set reinvite_allowed_at = ${now} where id = ${id}`;
}
