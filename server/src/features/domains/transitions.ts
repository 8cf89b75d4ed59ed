// What a check does to a claim (document 1, "Domain verification status"), as one pure function.
//
//   pending | failed  --found-->      verified  (first_verified_at set once)
//   pending | failed  --otherwise-->  failed    (also when the servers gave no answer: the check failed)
//   verified          --found-->      verified  (verified_at advances)
//   verified          --absent-->     lost      (lost_since set: the proof is gone or replaced)
//   lost              --found-->      verified  (lost_since cleared, first_verified_at unchanged)
//   lost              --absent-->     lost      (lost_since unchanged: the grace runs from the loss)
//   verified | lost   --unanswered--> unchanged (no answer is no evidence that the proof went: a
//                                     resolver outage must not start the fourteen days of grace)
//
// Every check sets last_checked_at, and last_error to the sentence (null when the proof was found).
import type { ProofOutcome } from './proof.js';

export type DomainStatus = 'pending' | 'verified' | 'lost' | 'failed';

export interface CheckState {
  status: DomainStatus;
  first_verified_at: Date | null;
  verified_at: Date | null;
  last_checked_at: Date | null;
  last_error: string | null;
  lost_since: Date | null;
}

/** The audit action of a change of status; none when the status stays. */
export type StatusEvent = 'domain.verified' | 'domain.lost' | 'domain.failed';

const EVENTS: Record<DomainStatus, StatusEvent | null> = {
  pending: null,
  verified: 'domain.verified',
  lost: 'domain.lost',
  failed: 'domain.failed',
};

export function afterCheck(
  state: CheckState,
  outcome: ProofOutcome,
  now: Date,
): { next: CheckState; event: StatusEvent | null } {
  let next: CheckState;
  if (outcome.kind === 'found') {
    next = {
      status: 'verified',
      first_verified_at: state.first_verified_at ?? now,
      verified_at: now,
      last_checked_at: now,
      last_error: null,
      lost_since: null,
    };
  } else {
    const wasProven = state.status === 'verified' || state.status === 'lost';
    const status: DomainStatus = !wasProven ? 'failed' : outcome.kind === 'absent' ? 'lost' : state.status;
    next = {
      ...state,
      status,
      last_checked_at: now,
      last_error: outcome.error,
      lost_since: status === 'lost' ? (state.lost_since ?? now) : null,
    };
  }
  return { next, event: next.status === state.status ? null : EVENTS[next.status] };
}
