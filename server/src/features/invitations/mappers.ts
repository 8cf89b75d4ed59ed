// Row → API shape, as an allow-list: a new column never reaches a response by accident. The status is
// the effective one, read with the request's clock.
import type { components } from '../../../../generated/api.js';
import { effectiveStatus, reinviteBlockedUntil } from './rules.js';
import type { InvitationPageRow, InvitationRow } from './store.js';

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

export const toInvitation = (i: InvitationRow, now: Date): components['schemas']['Invitation'] => ({
  id: i.id,
  organization_id: i.organization_id,
  email: i.email,
  role: i.role,
  status: effectiveStatus(i, now),
  inviter_user_id: i.inviter_user_id,
  created_at: i.created_at.toISOString(),
  expires_at: i.expires_at.toISOString(),
  accepted_at: iso(i.accepted_at),
  declined_at: iso(i.declined_at),
  revoked_at: iso(i.revoked_at),
  reinvite_blocked_until: iso(reinviteBlockedUntil(i, now)),
});

export const toInvitationPage = (
  p: InvitationPageRow,
  now: Date,
): components['schemas']['InvitationPage'] => ({
  id: p.id,
  organization_id: p.organization_id,
  organization_name: p.organization_name,
  inviter_name: p.inviter_name,
  created_at: p.created_at.toISOString(),
  expires_at: p.expires_at.toISOString(),
  role: p.role,
  status: effectiveStatus(p, now),
  inviter_avatar_asset_id: p.inviter_avatar_asset_id,
  organization_icon_asset_id: p.organization_icon_asset_id,
});
