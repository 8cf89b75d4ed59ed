// The periodic recheck of proven claims (document 1, "Domain verification status": verified → lost
// when the proof is gone or replaced, lost → verified when it is back; `verified_at` advances on each
// successful recheck). The job queue runs it on a schedule; each run takes one batch of verified and
// lost claims, the longest unchecked first, so every claim comes round in turn however many there are.
// Pending and failed claims are checked only when someone asks (POST .../check).
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { checkClaim, type CheckDeps } from './check.js';
import * as store from './store.js';

export interface RecheckOptions {
  /** Claims per run (default 100). */
  limit?: number;
  /** A claim checked more recently than this is not due (default one hour). */
  minIntervalMs?: number;
  /** Lookups in flight at once (default 8): each may wait up to DNS_TIMEOUT_MS. */
  concurrency?: number;
}

export interface RecheckResult {
  /** The run's id, also the `request_id` of the audit entries it recorded. */
  runId: string;
  checked: number;
  verified: number;
  lost: number;
}

export async function recheckDomains(
  ctx: CheckDeps & { log?: Pick<Logger, 'info' | 'warn'> },
  options: RecheckOptions = {},
): Promise<RecheckResult> {
  const { limit = 100, minIntervalMs = 60 * 60 * 1000, concurrency = 8 } = options;
  const runId = `domain-recheck:${randomUUID()}`;
  const due = await store.dueForRecheck(ctx.sql, new Date(ctx.clock.now().getTime() - minIntervalMs), limit);
  const result: RecheckResult = { runId, checked: 0, verified: 0, lost: 0 };
  // The platform itself acts: no user, token or application.
  const audit = { ctx: { requestId: runId, clock: ctx.clock }, actor: { userId: null } };
  let next = 0;
  const worker = async () => {
    while (next < due.length) {
      const claim = due[next++]!;
      try {
        // Skipped when a check was saved since the batch was read: that outcome is newer.
        const checked = await checkClaim(ctx, claim, audit, claim.last_checked_at);
        if (!checked) continue;
        result.checked += 1;
        if (checked.event === 'domain.verified') result.verified += 1;
        if (checked.event === 'domain.lost') result.lost += 1;
      } catch (err) {
        // One claim's failure (a database hiccup) must not stop the rest of the batch.
        ctx.log?.warn({ err, domain: claim.domain, run: runId }, 'domain recheck failed');
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, due.length) }, worker));
  if (due.length > 0) ctx.log?.info({ run: runId, due: due.length, ...result }, 'domains rechecked');
  return result;
}
