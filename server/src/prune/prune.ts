// Periodic deletion of rows that no longer mean anything, each by its own retention rule below. Every
// statement deletes a bounded batch in its own transaction, so pruning a backlog never holds locks
// for long; a run stops after MAX_BATCHES and the next run goes on.
import { deleteFinishedMail } from '../mail/store.js';
import { IDEMPOTENCY_WINDOW_MS } from '../operations/idempotency.js';
import type { TaskContext } from '../jobs/context.js';
import {
  deleteExpiredIdempotencyKeys,
  deleteExpiredLoginChallenges,
  deleteExpiredOAuthRows,
  deleteExpiredRateLimitBuckets,
  deleteExpiredSigningKeys,
} from './store.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export const RETENTION = {
  /**
   * Sent or given-up mail: the envelope (recipient, subject, kind, times, attempts, last error) stays
   * 90 days for audit ("did you send me the code?"); the bodies were erased when it was sent.
   */
  finishedMailMs: 90 * DAY,
  /**
   * Login challenges, a day past their expiry (consumed and burnt ones expire too): none can be used
   * after expires_at, and a day keeps recent sign-in attempts (address, user agent) to look into.
   */
  loginChallengeMs: DAY,
  /**
   * Signing keys, a day past expires_at: by then no token they signed is valid (expires_at is one
   * longest token lifetime past retirement), and the day covers clocks that disagree.
   */
  signingKeyMs: DAY,
  /**
   * OAuth flows (10 minutes) and completion keys (2 minutes), a day past their expiry: spent or not,
   * none can be used then, and the day keeps a failed sign-in to look into.
   */
  oauthMs: DAY,
} as const;

export const PRUNE_BATCH = 1000;
const MAX_BATCHES = 20;

async function inBatches(ctx: TaskContext, what: string, statement: () => Promise<number>): Promise<void> {
  let total = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const n = await statement();
    total += n;
    if (n < PRUNE_BATCH) break;
  }
  if (total > 0) ctx.log.info({ pruned: what, rows: total }, 'pruned');
}

/** Rate-limit buckets whose window and the next are over (expires_at, written with each hit). */
export function pruneRateLimitBuckets(ctx: TaskContext): Promise<void> {
  return inBatches(ctx, 'rate_limit_buckets', () =>
    deleteExpiredRateLimitBuckets(ctx.sql, ctx.clock.now(), PRUNE_BATCH),
  );
}

export function pruneLoginChallenges(ctx: TaskContext): Promise<void> {
  const before = new Date(ctx.clock.now().getTime() - RETENTION.loginChallengeMs);
  return inBatches(ctx, 'login_challenges', () => deleteExpiredLoginChallenges(ctx.sql, before, PRUNE_BATCH));
}

export function pruneFinishedMail(ctx: TaskContext): Promise<void> {
  const before = new Date(ctx.clock.now().getTime() - RETENTION.finishedMailMs);
  return inBatches(ctx, 'mail_outbox', () => deleteFinishedMail(ctx.sql, before, PRUNE_BATCH));
}

export function pruneSigningKeys(ctx: TaskContext): Promise<void> {
  const before = new Date(ctx.clock.now().getTime() - RETENTION.signingKeyMs);
  return inBatches(ctx, 'signing_keys', () => deleteExpiredSigningKeys(ctx.sql, before, PRUNE_BATCH));
}

export function pruneOAuthFlows(ctx: TaskContext): Promise<void> {
  const before = new Date(ctx.clock.now().getTime() - RETENTION.oauthMs);
  return inBatches(ctx, 'oauth_flows, oauth_completions', () => deleteExpiredOAuthRows(ctx.sql, before, PRUNE_BATCH));
}

/** Idempotency keys past their 24 hours (DECISIONS.md §4): a retry after that is a new request anyway. */
export function pruneIdempotencyKeys(ctx: TaskContext): Promise<void> {
  const before = new Date(ctx.clock.now().getTime() - IDEMPOTENCY_WINDOW_MS);
  return inBatches(ctx, 'idempotency_keys', () => deleteExpiredIdempotencyKeys(ctx.sql, before, PRUNE_BATCH));
}
