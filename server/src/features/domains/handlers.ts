// Claimed domains (document 1, "Domain verification", "Audit and domains"): any member lists the
// claims; Owners and Admins claim a domain and check its proof. The periodic recheck is recheck.ts;
// who may serve a name is authorization.ts.
import { randomBytes } from 'node:crypto';
import { actorOf, recordAudit } from '../../audit/record.js';
import { base62Encode } from '../../auth/crypto/base62.js';
import { requireMembership } from '../../authz/organization-access.js';
import { invalidFieldValue, notFound, rateLimited, type ValidationIssue } from '../../http/errors.js';
import type { AreaHandlers } from '../../http/handler.js';
import { hit, type Limit } from '../../ratelimit/limiter.js';
import { checkClaim } from './check.js';
import { toDomainVerification } from './mappers.js';
import { claimableDomain } from './names.js';
import { platformZones } from '../parent-domains/store.js';
import * as store from './store.js';

/** Each check sends queries to DNS servers outside the platform: a few a minute is plenty. */
const CHECKS_PER_CLAIM: Limit = { name: 'domain-check:claim', max: 20, windowSeconds: 10 * 60 };

/** The claim's challenge: public once published, so kept as it is; 32 random bytes, never made again. */
const challengeValue = () => `svc-domain-verification=${base62Encode(randomBytes(32))}`;

function domainOf(
  input: string,
  platformZones: readonly string[],
  location: ValidationIssue['location'],
  pointer: string,
): string {
  const parsed = claimableDomain(input, platformZones);
  if (parsed.ok) return parsed.domain;
  throw invalidFieldValue(parsed.reason, [{ location, pointer, message: parsed.reason }]);
}

const claimNotFound = () => notFound('This organization has no claim of that domain.');

export const domainHandlers: AreaHandlers<'domainList' | 'domainAdd' | 'domainCheck'> = {
  async domainList({ path, auth, ctx }) {
    await requireMembership(ctx.sql, path.id, auth, 'domains.read');
    const claims = await store.listClaims(ctx.sql, path.id);
    return { status: 200, body: claims.map(toDomainVerification) };
  },

  async domainAdd({ path, body, auth, ctx }) {
    const result = await ctx.sql.begin(async (tx) => {
      const caller = await requireMembership(tx, path.id, auth, 'domains.manage');
      const domain = domainOf(body.domain, await platformZones(tx, ctx.config.platformDomain), 'body', '/domain');
      // A second claim of the same domain answers the first as it is (seed: "creates the challenge
      // or re-reads it"); two concurrent ones make one claim.
      const made = await store.insertClaim(tx, path.id, domain, challengeValue(), ctx.clock.now());
      if (!made) return { created: false, claim: (await store.findClaim(tx, path.id, domain))! };
      await recordAudit(tx, ctx, actorOf(auth), {
        organizationId: caller.organization.id,
        action: 'domain.added',
        target: { type: 'domain', id: domain },
      });
      return { created: true, claim: made };
    });
    const answer = toDomainVerification(result.claim);
    return result.created ? { status: 201, body: answer } : { status: 200, body: answer };
  },

  async domainCheck({ path, auth, ctx }) {
    await requireMembership(ctx.sql, path.id, auth, 'domains.manage');
    const domain = domainOf(path.domain, [], 'path', 'domain');
    const claim = await store.findClaim(ctx.sql, path.id, domain);
    if (!claim) throw claimNotFound();
    // Keyed by the stored claim, not the path: one bucket per claim however its id is spelled.
    const limit = await hit(ctx.sql, CHECKS_PER_CLAIM, `${claim.organization_id}:${claim.domain}`, ctx.clock.now());
    if (!limit.allowed) throw rateLimited(limit.retryAfterSeconds);
    const checked = await checkClaim(ctx, claim, { ctx, actor: actorOf(auth) });
    if (!checked) throw claimNotFound();
    return { status: 200, body: toDomainVerification(checked.claim) };
  },
};
