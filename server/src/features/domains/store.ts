// All SQL of domain claims (document 1, "Domain verification"). A claim is keyed by (organization,
// domain). Checks look DNS up outside any transaction, then apply what they found under the claim's row
// lock, so a slow DNS server never holds a lock and two checks of one claim apply one after the other.
import type { Db } from '../../db/client.js';
import type { HoldingClaim } from './holder.js';
import type { CheckState, DomainStatus } from './transitions.js';

export interface ClaimRow extends CheckState {
  organization_id: string;
  domain: string;
  record_value: string;
  grandfathered_until: Date | null;
  created_at: Date;
}

const COLUMNS =
  'organization_id, domain, record_value, status, first_verified_at, verified_at, last_checked_at, last_error, lost_since, grandfathered_until, created_at';

/** In the order they were claimed. */
export async function listClaims(db: Db, organizationId: string): Promise<ClaimRow[]> {
  return db<ClaimRow[]>`
    select ${db.unsafe(COLUMNS)} from domain_claims
    where organization_id = ${organizationId}
    order by created_at, domain`;
}

export async function findClaim(
  db: Db,
  organizationId: string,
  domain: string,
  options: { lock?: boolean } = {},
): Promise<ClaimRow | undefined> {
  const [row] = await db<ClaimRow[]>`
    select ${db.unsafe(COLUMNS)} from domain_claims
    where organization_id = ${organizationId} and domain = ${domain}
    ${options.lock ? db`for update` : db``}`;
  return row;
}

/** Makes the claim unless the organization has one; answers the new claim, or undefined if it existed. */
export async function insertClaim(
  db: Db,
  organizationId: string,
  domain: string,
  recordValue: string,
  now: Date,
): Promise<ClaimRow | undefined> {
  const [row] = await db<ClaimRow[]>`
    insert into domain_claims (organization_id, domain, record_value, status, created_at)
    values (${organizationId}, ${domain}, ${recordValue}, 'pending', ${now})
    on conflict (organization_id, domain) do nothing
    returning ${db.unsafe(COLUMNS)}`;
  return row;
}

export async function saveCheck(
  db: Db,
  organizationId: string,
  domain: string,
  next: CheckState,
): Promise<ClaimRow> {
  const [row] = await db<ClaimRow[]>`
    update domain_claims set
      status = ${next.status},
      first_verified_at = ${next.first_verified_at},
      verified_at = ${next.verified_at},
      last_checked_at = ${next.last_checked_at},
      last_error = ${next.last_error},
      lost_since = ${next.lost_since}
    where organization_id = ${organizationId} and domain = ${domain}
    returning ${db.unsafe(COLUMNS)}`;
  return row!;
}

/** Every organization's claim of any of `domains`, for deciding who holds each. */
export async function claimsOfDomains(
  db: Db,
  domains: readonly string[],
): Promise<(HoldingClaim & { domain: string })[]> {
  if (domains.length === 0) return [];
  return db<(HoldingClaim & { domain: string })[]>`
    select domain, organization_id, status, first_verified_at, lost_since, grandfathered_until, created_at
    from domain_claims where domain in ${db(domains as string[])}
    order by domain, organization_id`;
}

export interface DueClaim {
  organization_id: string;
  domain: string;
  record_value: string;
  last_checked_at: Date | null;
}

const RECHECKED: DomainStatus[] = ['verified', 'lost'];

/** Verified and lost claims last checked at or before `checkedBefore`, the longest unchecked first. */
export async function dueForRecheck(db: Db, checkedBefore: Date, limit: number): Promise<DueClaim[]> {
  return db<DueClaim[]>`
    select organization_id, domain, record_value, last_checked_at from domain_claims
    where status in ${db(RECHECKED)} and (last_checked_at is null or last_checked_at <= ${checkedBefore})
    order by last_checked_at nulls first, organization_id, domain
    limit ${limit}`;
}
