// Whether a service of an organization may use a host name (issue 11: "a verified claim is what later
// lets a service attach a name under that domain; a name held by another organization is refused the
// same way as an unproven one"). The service-instance routes (custom domains, HTTP domains) call this
// and refuse with one answer whatever the reason, so a refusal says nothing of other organizations.
import type { Db } from '../../db/client.js';
import { holderOf } from './holder.js';
import { parseHostname } from './names.js';
import { claimsOfDomain } from './store.js';

/**
 * True when `hostname` (any case, U- or A-labels, a trailing dot allowed) is the registrable domain or
 * a name under it, and `organizationId` holds that domain at `now`: its claim is verified, lost for
 * less than fourteen days, or grandfathered until after `now`, and no other organization's claim
 * stands before it (holder.ts). False for anything that is not a host name under a public suffix.
 */
export async function isDomainServable(
  db: Db,
  organizationId: string,
  hostname: string,
  now: Date,
): Promise<boolean> {
  const parsed = parseHostname(hostname);
  if (!parsed.ok) return false;
  const claims = await claimsOfDomain(db, parsed.registrable);
  return holderOf(claims, now) === organizationId.toLowerCase();
}
