// The time rules of invitations (document 1, "Invitation status", "Limits"; DECISIONS.md §4): pure, so
// they are decided with the request's clock and tested with a table.
import type { components } from '../../../../generated/api.js';

export type InvitationStatus = components['schemas']['InvitationStatus'];
/** What the table stores: `expired` is never stored, it is read from `expires_at`. */
export type StoredStatus = Exclude<InvitationStatus, 'expired'>;

const DAY_MS = 86_400_000;
/** An invitation expires 7 days after it is made (DECISIONS.md §4). */
export const INVITATION_LIFETIME_MS = 7 * DAY_MS;
/** After a decline, the organization may not invite the address again for 30 days (seed "Limits"). */
export const REINVITE_COOLDOWN_MS = 30 * DAY_MS;

export interface Timed {
  status: StoredStatus;
  expires_at: Date;
}

/** The status a reader sees: a pending invitation reads `expired` from its `expires_at` on. */
export function effectiveStatus(inv: Timed, now: Date): InvitationStatus {
  return inv.status === 'pending' && now.getTime() >= inv.expires_at.getTime() ? 'expired' : inv.status;
}

export function expiresAt(createdAt: Date): Date {
  return new Date(createdAt.getTime() + INVITATION_LIFETIME_MS);
}

/**
 * Until when a declined invitation keeps the organization from inviting the address again: 30 days
 * after the decline, unless the invitee lifted it; null when nothing is held back (any more).
 */
export function reinviteBlockedUntil(
  inv: { status: StoredStatus; declined_at: Date | null; reinvite_allowed_at: Date | null },
  now: Date,
): Date | null {
  if (inv.status !== 'declined' || inv.declined_at === null || inv.reinvite_allowed_at !== null) return null;
  const until = new Date(inv.declined_at.getTime() + REINVITE_COOLDOWN_MS);
  return until.getTime() > now.getTime() ? until : null;
}

/** `2026-11-28 12:00 UTC`: how the mail states the expiry (no time zone of the reader's is known). */
export function mailTime(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
