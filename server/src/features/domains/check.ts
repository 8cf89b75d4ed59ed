// One check of one claim, shared by `POST .../domains/{domain}/check` and the periodic recheck: look
// the proof up in DNS (no transaction open: a slow server holds no lock), then apply the outcome to the
// claim as it is now, under its row lock, with the audit entry of a change of status.
import { recordAudit, type AuditActor } from '../../audit/record.js';
import type { Config } from '../../config.js';
import type { Sql } from '../../db/client.js';
import type { Clock } from '../../clock.js';
import type { RequestContext } from '../../http/handler.js';
import { recordNameOf } from './names.js';
import { findProof } from './proof.js';
import * as store from './store.js';
import { afterCheck } from './transitions.js';

export interface CheckDeps {
  sql: Sql;
  config: Pick<Config, 'dnsServers' | 'dnsTimeoutMs'>;
  clock: Clock;
}

/** What an audit entry needs of its context: the request (or job run) id and the clock. */
export type AuditContext = Pick<RequestContext, 'requestId' | 'clock'>;

export interface Checked {
  claim: store.ClaimRow;
  event: 'domain.verified' | 'domain.lost' | 'domain.failed' | null;
}

/**
 * Checks `claim` and saves the outcome. Answers undefined when the claim is gone by then, or when
 * `onlyIfCheckedAt` is given and another check was saved since it was read (the recheck then leaves
 * the newer outcome alone).
 */
export async function checkClaim(
  deps: CheckDeps,
  claim: { organization_id: string; domain: string; record_value: string },
  audit: { ctx: AuditContext; actor: AuditActor },
  onlyIfCheckedAt?: Date | null,
): Promise<Checked | undefined> {
  const outcome = await findProof(recordNameOf(claim.domain), claim.record_value, {
    servers: deps.config.dnsServers,
    timeoutMs: deps.config.dnsTimeoutMs,
  });
  return deps.sql.begin(async (tx) => {
    const current = await store.findClaim(tx, claim.organization_id, claim.domain, { lock: true });
    if (!current || current.record_value !== claim.record_value) return undefined;
    if (onlyIfCheckedAt !== undefined && current.last_checked_at?.getTime() !== onlyIfCheckedAt?.getTime()) {
      return undefined;
    }
    const { next, event } = afterCheck(current, outcome, deps.clock.now());
    const saved = await store.saveCheck(tx, claim.organization_id, claim.domain, next);
    if (event) {
      // The audit record takes a request context; a job run passes its own id and clock.
      await recordAudit(tx, audit.ctx as RequestContext, audit.actor, {
        organizationId: claim.organization_id,
        action: event,
        target: { type: 'domain', id: claim.domain },
      });
    }
    return { claim: saved, event };
  });
}
