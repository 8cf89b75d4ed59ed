// Which organization holds a domain, that is, whose services may use names under it (document 1,
// "Domain verification status": "fourteen-day grace after lost_since elapses | domain stops being
// served"; issue 11: "a name held by another organization is refused the same way as an unproven one").
// Pure: authorization.ts reads the claims.
//
// A claim serves while it is verified, while it is lost for less than fourteen days, or while it is
// grandfathered (until that date). Several organizations may claim one domain, and DNS may even hold
// several proofs at once; the names are served for at most one of them, decided in this order:
//   1. a verified claim (the proof is in DNS now) over a lost one in its grace, over a grandfathered one:
//      grace covers a proof that vanished by mistake, not a domain whose DNS now proves someone else;
//   2. among claims of the same standing, the earliest first verified (the incumbent keeps the names
//      while both proofs are published), then the earliest made.

export const GRACE_MS = 14 * 24 * 60 * 60 * 1000;

export interface HoldingClaim {
  organization_id: string;
  status: 'pending' | 'verified' | 'lost' | 'failed';
  first_verified_at: Date | null;
  lost_since: Date | null;
  grandfathered_until: Date | null;
  created_at: Date;
}

/** 3 verified, 2 lost within its grace, 1 grandfathered, 0 serving nothing. */
export function standing(claim: HoldingClaim, now: Date): number {
  if (claim.status === 'verified') return 3;
  if (claim.status === 'lost' && claim.lost_since && now.getTime() < claim.lost_since.getTime() + GRACE_MS)
    return 2;
  if (claim.grandfathered_until && now.getTime() < claim.grandfathered_until.getTime()) return 1;
  return 0;
}

const time = (d: Date | null): number => (d === null ? Number.POSITIVE_INFINITY : d.getTime());

/** The organization whose services may use names under the domain these claims are of, or null. */
export function holderOf(claims: readonly HoldingClaim[], now: Date): string | null {
  let best: { claim: HoldingClaim; rank: number } | null = null;
  for (const claim of claims) {
    const rank = standing(claim, now);
    if (rank === 0) continue;
    const better =
      best === null ||
      rank > best.rank ||
      (rank === best.rank &&
        (time(claim.first_verified_at) < time(best.claim.first_verified_at) ||
          (time(claim.first_verified_at) === time(best.claim.first_verified_at) &&
            claim.created_at.getTime() < best.claim.created_at.getTime())));
    if (better) best = { claim, rank };
  }
  return best?.claim.organization_id ?? null;
}
