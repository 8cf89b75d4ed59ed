// The re-invite cool-down (seed "Limits": 30 days after a decline, unless the invitee lifts it), which
// holds back both a new invitation of the address and a direct add by id of its account
// (DECISIONS.md §7): the add must not be a way round the decline.
import type { Db } from '../../db/client.js';
import { unprocessable } from '../../http/errors.js';
import { REINVITE_COOLDOWN_MS, reinviteBlockedUntil } from './rules.js';
import * as store from './store.js';

/**
 * Refuses the address while a decline of it holds the organization back (30 days, unless lifted);
 * `by` says whether the caller asked by address (an invitation) or by account id (a direct add).
 */
export async function refuseDuringCooldown(
  db: Db,
  organizationId: string,
  email: string,
  now: Date,
  by: 'address' | 'id' = 'address',
): Promise<void> {
  const declined = await store.declinedSince(
    db,
    organizationId,
    email,
    new Date(now.getTime() - REINVITE_COOLDOWN_MS),
  );
  const until = declined
    .map((d) => reinviteBlockedUntil(d, now))
    .filter((d): d is Date => d !== null)
    .sort((a, b) => b.getTime() - a.getTime())[0];
  if (until) {
    const detail =
      by === 'address'
        ? `This address declined an invitation to this organization; it can be invited again from ${until.toISOString()}, or sooner if its owner allows it.`
        : `This person declined an invitation to this organization; they can be added from ${until.toISOString()}, or sooner if they allow it.`;
    throw unprocessable('reinvite-cooldown', detail, { until: until.toISOString() });
  }
}
