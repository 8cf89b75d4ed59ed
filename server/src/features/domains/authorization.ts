// Whether a service of an organization may use a host name (issue 11: "a verified claim is what later
// lets a service attach a name under that domain; a name held by another organization is refused the
// same way as an unproven one"; DECISIONS §7: "a verified claim covers the names under it"). The
// service-instance routes (custom domains, HTTP domains) call this and refuse with one answer whatever
// the reason, so a refusal says nothing of other organizations.
//
// Claims may nest (`bigcorp.com` and `shop.bigcorp.com`, by different organizations). A name is decided
// by the most specific claimed name above it that has a counting claim (holder.ts: verified, lost within
// its grace, grandfathered): the team that proved `shop.bigcorp.com` serves `www.shop.bigcorp.com`, and
// the owner of `bigcorp.com` everything else under it. A pending or failed claim counts for nothing, so
// it neither authorizes nor takes a name from the parent's holder.
import type { Db } from '../../db/client.js';
import { holderOf, standing } from './holder.js';
import { coveringNames, isWithin, parseHostname } from './names.js';
import { claimsOfDomains } from './store.js';

/** The organization that may serve `hostname` at `now`, or null (unclaimed, unproven, or no host name). */
export async function holderOfName(
  db: Db,
  hostname: string,
  now: Date,
  platformZones: readonly string[] = [],
): Promise<string | null> {
  const parsed = parseHostname(hostname);
  if (!parsed.ok || platformZones.some((z) => isWithin(parsed.hostname, z))) return null;
  const names = coveringNames(parsed.hostname, parsed.registrable);
  const claims = await claimsOfDomains(db, names);
  for (const name of names) {
    const counting = claims.filter((c) => c.domain === name && standing(c, now) > 0);
    if (counting.length > 0) return holderOf(counting, now);
  }
  return null;
}

/**
 * True when `organizationId` may serve `hostname` (any case, U- or A-labels, a trailing dot allowed) at
 * `now`: the most specific counting claim above the name is this organization's.
 */
export async function isDomainServable(
  db: Db,
  organizationId: string,
  hostname: string,
  now: Date,
  platformZones: readonly string[] = [],
): Promise<boolean> {
  return (await holderOfName(db, hostname, now, platformZones)) === organizationId.toLowerCase();
}
