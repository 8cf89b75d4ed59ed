// Obtaining and renewing the certificate of a name on the HTTP ingress (custom domains and HTTP domains,
// `http_names`): the preflight (preflight.ts), then ACME (ACME_DIRECTORY_URL) or the local CA, stored
// with its key sealed. A name waits `pending` with the reason until both succeed; a refusal of the CA
// that cannot change is `failed`. `next_attempt_at` is when to act next: the retry of a pending name
// (backing off from 30 s to 6 h), the renewal of an active one (at two thirds of the certificate's
// lifetime, as Let's Encrypt advises for 90-day certificates).
import type { TaskContext } from '../jobs/context.js';
import { issueAcmeCertificate, acmeCaaIdentities, PermanentAcmeError } from './acme.js';
import { issueLocalCertificate, type IssuedCertificate } from './local-ca.js';
import { zoneRouting } from '../dns/platform-zones.js';
import { checkCaa, checkResolvesToIngress } from './preflight.js';
import * as store from './issuance-store.js';
import { putCertificate } from './store.js';

const MIN_RETRY_MS = 30_000;
const MAX_RETRY_MS = 6 * 3600_000;
export const retryDelayMs = (attempts: number): number =>
  Math.min(MIN_RETRY_MS * 2 ** Math.max(0, attempts), MAX_RETRY_MS);

/** When a certificate valid from `notBefore` to `notAfter` is renewed: two thirds into its lifetime. */
export const renewalTime = (notBefore: Date, notAfter: Date): Date =>
  new Date(notBefore.getTime() + ((notAfter.getTime() - notBefore.getTime()) * 2) / 3);

/** The addresses a name must resolve to: the ingress listens on HOST. */
const ingressAddresses = (host: string) => [host];

export type AttemptOutcome = 'gone' | 'not-due' | 'busy' | 'waiting' | 'failed' | 'issued';

/** How long an attempt holds its name: longer than any attempt takes (ACME waits at most a few minutes). */
const CLAIM_MS = 10 * 60_000;

/**
 * One attempt for the name `id`: preflight, issue, store. Errors of the CA are recorded, not thrown.
 * `busy` when another attempt for the name is under way (the sweep's and an attach's jobs can overlap):
 * that one decides, and no second ACME order is placed.
 */
export async function certifyHttpName(ctx: TaskContext, id: string): Promise<AttemptOutcome> {
  const row = await store.findHttpName(ctx.sql, id);
  if (!row || row.status === 'failed') return 'gone';
  const now = ctx.clock.now();
  if (row.status === 'active' && row.next_attempt_at !== null && row.next_attempt_at > now) return 'not-due';
  const until = new Date(now.getTime() + CLAIM_MS);
  if (!(await store.claimAttempt(ctx.sql, id, now, until))) return 'busy';
  try {
    return await attempt(ctx, row, now);
  } finally {
    await store.releaseAttempt(ctx.sql, id, until);
  }
}

async function attempt(ctx: TaskContext, row: store.HttpNameToCertify, now: Date): Promise<AttemptOutcome> {
  const { id } = row;

  const waiting = async (reason: string, failed = false): Promise<AttemptOutcome> => {
    const next = failed ? null : new Date(now.getTime() + retryDelayMs(row.attempts));
    await store.recordAttemptFailed(
      ctx.sql,
      { id, hostname: row.hostname, reason, nextAttemptAt: next, failed },
      now,
    );
    return failed ? 'failed' : 'waiting';
  };

  const routing = await zoneRouting(ctx.sql, ctx.config);
  const resolves = await checkResolvesToIngress(
    ctx.config,
    routing,
    row.hostname,
    ingressAddresses(ctx.config.host),
  );
  if (!resolves.ok) return waiting(resolves.reason);
  const acme = ctx.config.acmeDirectoryUrl !== null;
  // The local CA is the platform's own: CAA names public CAs, so it is checked only when the deployment
  // names identities for it (ACME_CAA_IDENTITIES).
  let identities: string[] | null = ctx.config.acmeCaaIdentities;
  if (acme) {
    try {
      identities = await acmeCaaIdentities(ctx.config);
    } catch (error) {
      return waiting(`The ACME directory could not be read: ${messageOf(error)}`);
    }
  }
  if (identities !== null) {
    const caa = await checkCaa(ctx.config, routing, row.hostname, identities);
    if (!caa.ok) return waiting(caa.reason);
  }

  let issued: IssuedCertificate;
  try {
    issued = acme
      ? await issueAcmeCertificate(
          { sql: ctx.sql, box: ctx.box, config: ctx.config, now: () => ctx.clock.now() },
          row.hostname,
        )
      : await issueLocalCertificate(ctx.config, [row.hostname], now);
  } catch (error) {
    if (error instanceof PermanentAcmeError)
      return waiting(`The CA refused ${row.hostname}: ${error.message}`, true);
    ctx.log.warn({ err: error, hostname: row.hostname }, 'certificate issuance failed; retrying later');
    return waiting(`The CA could not issue the certificate yet: ${messageOf(error)}`);
  }
  const stored = await ctx.sql.begin(async (tx) => {
    const marked = await store.markCertified(
      tx,
      { id, hostname: row.hostname, renewAt: renewalTime(issued.notBefore, issued.notAfter) },
      ctx.clock.now(),
    );
    if (marked) {
      await putCertificate(
        tx,
        ctx.box,
        { hostname: row.hostname, issuer: acme ? 'acme' : 'local', ...issued },
        ctx.clock.now(),
      );
    }
    return marked;
  });
  return stored ? 'issued' : 'gone';
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 300);
