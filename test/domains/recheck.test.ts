// The periodic recheck of proven claims and the rule of who may serve names under a domain (seed
// document 1, "Domain verification status": verified → lost → verified, fourteen days of grace;
// issue 11: grandfathered claims, another organization's claim refused like an unproven one), driven
// by the app's frozen clock against a real DNS server on loopback.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GRACE_MS } from '../../server/src/features/domains/holder.js';
import { toDomainVerification } from '../../server/src/features/domains/mappers.js';
import { recheckDomains } from '../../server/src/features/domains/recheck.js';
import { isDomainServable } from '../../server/src/features/domains/authorization.js';
import { listClaims } from '../../server/src/features/domains/store.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { startTestDns, type TestDns } from '../support/dns.js';
import { signedIn as signIn, type Caller } from '../support/organizations.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let dns: TestDns;

beforeAll(async () => {
  smtp = await startTestSmtp();
  dns = await startTestDns();
  app = await startTestApp({
    env: {
      SMTP_URL: smtp.url,
      SOURCE_RATE_LIMIT_SCALE: '1000',
      DNS_SERVERS: dns.server,
      DNS_TIMEOUT_MS: '300',
    },
  });
});
afterAll(async () => {
  await app?.close();
  await dns?.close();
  await smtp?.close();
});
beforeEach(async () => {
  dns.mode = 'answer';
  // Each test starts from its own claims: the recheck takes every due claim of the database.
  await app.sql`delete from domain_claims`;
});

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
let n = 0;
const unique = (tag: string) => `${tag}-${Date.now().toString(36)}-${(n += 1)}`;
const deps = () => ({ sql: app.sql, config: app.config, clock: app.clock });

async function owner(tag: string): Promise<Caller & { org: string }> {
  const caller = await signIn(app, smtp, tag);
  const org = (await caller.api.organizationCreate({ body: { name: 'Recheck', slug: unique('re') } })).id;
  return { ...caller, org };
}

/** A claim proven now through the API: its TXT record published and checked. */
async function proven(who: Caller & { org: string }, domain = `${unique('proven')}.com`) {
  const claim = await who.api.domainAdd({ path: { id: who.org }, body: { domain } });
  dns.setTxt(claim.record_name, claim.record_value);
  const checked = await who.api.domainCheck({ path: { id: who.org, domain } });
  expect(checked.status).toBe('verified');
  return checked;
}

/** A claim as the API shows it, read straight from the database: the frozen clock runs past the callers' tokens. */
const read = async (who: { org: string }, domain: string) =>
  toDomainVerification((await listClaims(app.sql, who.org)).find((c) => c.domain === domain)!);

describe('recheckDomains', () => {
  it('moves verified claims whose proof went to lost and back, advancing verified_at, audited without an actor', async () => {
    const a = await owner('recheck');
    const kept = await proven(a);
    const dropped = await proven(a);
    const t0 = app.clock.now().toISOString();

    // Not due yet: checked less than an hour ago.
    app.clock.advance(HOUR / 2);
    expect(await recheckDomains(deps())).toMatchObject({ checked: 0 });

    dns.remove(dropped.record_name);
    app.clock.advance(HOUR);
    const t1 = app.clock.now().toISOString();
    const run = await recheckDomains(deps());
    expect(run).toMatchObject({ checked: 2, verified: 0, lost: 1 });
    expect(await read(a, kept.domain)).toMatchObject({
      status: 'verified',
      verified_at: t1,
      first_verified_at: t0,
    });
    expect(await read(a, dropped.domain)).toMatchObject({
      status: 'lost',
      lost_since: t1,
      verified_at: t0,
      last_checked_at: t1,
      last_error: `No TXT record with the expected value at ${dropped.record_name}.`,
    });
    const [entry] = await app.sql`
      select action, actor_user_id, actor_token_id, actor_application_id, target_id, request_id
      from audit_entries where organization_id = ${a.org} and request_id = ${run.runId}`;
    expect(entry).toEqual({
      action: 'domain.lost',
      actor_user_id: null,
      actor_token_id: null,
      actor_application_id: null,
      target_id: dropped.domain,
      request_id: run.runId,
    });

    // Published again: the next recheck verifies it, first_verified_at unchanged.
    dns.setTxt(dropped.record_name, dropped.record_value);
    app.clock.advance(HOUR);
    const t2 = app.clock.now().toISOString();
    expect(await recheckDomains(deps())).toMatchObject({ checked: 2, verified: 1, lost: 0 });
    expect(await read(a, dropped.domain)).toMatchObject({
      status: 'verified',
      first_verified_at: t0,
      verified_at: t2,
      lost_since: null,
      last_error: null,
    });
  });

  it('takes a batch, the longest unchecked first, and leaves pending and failed claims alone', async () => {
    const a = await owner('batch');
    const first = await proven(a);
    app.clock.advance(60_000);
    const second = await proven(a);
    app.clock.advance(60_000);
    const third = await proven(a);
    const pending = await a.api.domainAdd({
      path: { id: a.org },
      body: { domain: `${unique('pending')}.com` },
    });
    const failed = await a.api.domainAdd({
      path: { id: a.org },
      body: { domain: `${unique('failed')}.com` },
    });
    await a.api.domainCheck({ path: { id: a.org, domain: failed.domain } });
    dns.setTxt(pending.record_name, pending.record_value);
    dns.setTxt(failed.record_name, failed.record_value);

    app.clock.advance(2 * HOUR);
    const now = app.clock.now().toISOString();
    expect(await recheckDomains(deps(), { limit: 2 })).toMatchObject({ checked: 2 });
    expect((await read(a, first.domain)).last_checked_at).toBe(now);
    expect((await read(a, second.domain)).last_checked_at).toBe(now);
    expect((await read(a, third.domain)).last_checked_at).toBe(third.last_checked_at);
    app.clock.advance(1000);
    expect(await recheckDomains(deps(), { limit: 2 })).toMatchObject({ checked: 1 });
    expect((await read(a, third.domain)).last_checked_at).toBe(app.clock.now().toISOString());
    // Only someone asking checks these.
    expect(await read(a, pending.domain)).toMatchObject({ status: 'pending', last_checked_at: null });
    expect((await read(a, failed.domain)).status).toBe('failed');
  });

  it('runs as the periodic job recheck_domains on the job queue', async () => {
    const a = await owner('job');
    const claim = await proven(a);
    dns.remove(claim.record_name);
    app.clock.advance(2 * HOUR);
    await app.worker!.run('recheck_domains');
    expect(await read(a, claim.domain)).toMatchObject({
      status: 'lost',
      lost_since: app.clock.now().toISOString(),
    });
  });

  it('a server that never answers leaves verified and lost claims as they were, with the reason', async () => {
    const a = await owner('silent');
    const claim = await proven(a);
    dns.mode = 'silent';
    app.clock.advance(2 * HOUR);
    const started = Date.now();
    expect(await recheckDomains(deps())).toMatchObject({ checked: 1, verified: 0, lost: 0 });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await read(a, claim.domain)).toMatchObject({
      status: 'verified',
      verified_at: claim.verified_at,
      lost_since: null,
      last_error: 'The DNS servers did not answer in time.',
      last_checked_at: app.clock.now().toISOString(),
    });
  });
});

describe('isDomainServable', () => {
  it('serves names under a verified claim, then for fourteen days after the proof is lost, then not', async () => {
    const a = await owner('grace');
    const claim = await proven(a);
    const now = () => app.clock.now();
    expect(await isDomainServable(app.sql, a.org, claim.domain, now())).toBe(true);
    expect(await isDomainServable(app.sql, a.org, `WWW.${claim.domain.toUpperCase()}.`, now())).toBe(true);
    expect(await isDomainServable(app.sql, a.org, `deep.shop.${claim.domain}`, now())).toBe(true);

    dns.remove(claim.record_name);
    app.clock.advance(2 * HOUR);
    await recheckDomains(deps());
    const lostSince = now();
    expect((await read(a, claim.domain)).status).toBe('lost');
    expect(await isDomainServable(app.sql, a.org, `www.${claim.domain}`, now())).toBe(true);
    app.clock.set(new Date(lostSince.getTime() + GRACE_MS - 1));
    expect(await isDomainServable(app.sql, a.org, `www.${claim.domain}`, now())).toBe(true);
    app.clock.set(new Date(lostSince.getTime() + GRACE_MS));
    expect(await isDomainServable(app.sql, a.org, `www.${claim.domain}`, now())).toBe(false);

    // The proof back: served again.
    dns.setTxt(claim.record_name, claim.record_value);
    await recheckDomains(deps());
    expect(await isDomainServable(app.sql, a.org, `www.${claim.domain}`, now())).toBe(true);
  });

  it('refuses pending and failed claims, other domains, and names that are no host names', async () => {
    const a = await owner('unproven');
    const pending = await a.api.domainAdd({
      path: { id: a.org },
      body: { domain: `${unique('pending')}.com` },
    });
    const failed = await a.api.domainAdd({
      path: { id: a.org },
      body: { domain: `${unique('failed')}.com` },
    });
    await a.api.domainCheck({ path: { id: a.org, domain: failed.domain } });
    const now = app.clock.now();
    expect(await isDomainServable(app.sql, a.org, pending.domain, now)).toBe(false);
    expect(await isDomainServable(app.sql, a.org, `www.${failed.domain}`, now)).toBe(false);
    expect(await isDomainServable(app.sql, a.org, `${unique('unclaimed')}.com`, now)).toBe(false);
    for (const name of ['192.0.2.1', 'com', 'co.uk', 'bad_name.com', '', 'printer.local']) {
      expect(await isDomainServable(app.sql, a.org, name, now)).toBe(false);
    }
    // A verified claim does not reach a look-alike: `x${domain}` is another registrable domain.
    const claim = await proven(a);
    expect(await isDomainServable(app.sql, a.org, `x${claim.domain}`, app.clock.now())).toBe(false);
  });

  it('serves a grandfathered domain until its date, without a proof', async () => {
    const a = await owner('grandfathered');
    const claim = await a.api.domainAdd({ path: { id: a.org }, body: { domain: `${unique('old')}.com` } });
    const until = new Date(app.clock.now().getTime() + 30 * DAY);
    await app.sql`update domain_claims set grandfathered_until = ${until} where domain = ${claim.domain}`;
    expect((await read(a, claim.domain)).grandfathered_until).toBe(until.toISOString());
    expect(await isDomainServable(app.sql, a.org, `app.${claim.domain}`, app.clock.now())).toBe(true);
    app.clock.set(until);
    expect(await isDomainServable(app.sql, a.org, `app.${claim.domain}`, app.clock.now())).toBe(false);
  });

  it('a name under a domain another organization holds is refused as an unproven one', async () => {
    const a = await owner('holder');
    const b = await owner('newcomer');
    const domain = `${unique('shared')}.com`;
    const held = await proven(a, domain);
    // B claims it too: pending, it serves B nothing, and A keeps it.
    const theirs = await b.api.domainAdd({ path: { id: b.org }, body: { domain } });
    expect(theirs.record_value).not.toBe(held.record_value);
    const now = () => app.clock.now();
    expect(await isDomainServable(app.sql, b.org, `www.${domain}`, now())).toBe(false);
    expect(await isDomainServable(app.sql, b.org, `www.${domain}`, now())).toBe(
      await isDomainServable(app.sql, b.org, `www.${unique('nobody')}.com`, now()),
    );
    expect(await isDomainServable(app.sql, a.org, `www.${domain}`, now())).toBe(true);

    // The DNS owner publishes B's proof beside A's: both verified, the incumbent keeps the names.
    app.clock.advance(60_000);
    dns.addTxt(held.record_name, theirs.record_value);
    expect((await b.api.domainCheck({ path: { id: b.org, domain } })).status).toBe('verified');
    expect(await isDomainServable(app.sql, a.org, `www.${domain}`, now())).toBe(true);
    expect(await isDomainServable(app.sql, b.org, `www.${domain}`, now())).toBe(false);

    // A's proof withdrawn: A is lost, in its grace, but B proves the domain now and takes it.
    dns.setTxt(held.record_name, theirs.record_value);
    app.clock.advance(2 * HOUR);
    await recheckDomains(deps());
    expect((await read(a, domain)).status).toBe('lost');
    expect(await isDomainServable(app.sql, a.org, `www.${domain}`, now())).toBe(false);
    expect(await isDomainServable(app.sql, b.org, `www.${domain}`, now())).toBe(true);
    // An unknown organization id, in any case, holds nothing.
    expect(await isDomainServable(app.sql, randomUUID(), domain, now())).toBe(false);
    expect(await isDomainServable(app.sql, b.org.toUpperCase(), domain, now())).toBe(true);
  });
  it('nested claims: the most specific counting claim decides, a pending one takes nothing', async () => {
    const parent = await owner('bigcorp');
    const team = await owner('shopteam');
    const other = await owner('squatter');
    const domain = `${unique('bigcorp')}.com`;
    const shop = `shop.${domain}`;
    const now = () => app.clock.now();
    // Both may claim while pending, and a third organization too: none of them authorizes anything.
    const teamClaim = await team.api.domainAdd({ path: { id: team.org }, body: { domain: shop } });
    expect(teamClaim).toMatchObject({ domain: shop, record_name: `_svc-challenge.${shop}`, status: 'pending' });
    await other.api.domainAdd({ path: { id: other.org }, body: { domain: shop } });
    expect(await isDomainServable(app.sql, team.org, shop, now())).toBe(false);

    await proven(parent, domain);
    // The parent's verified claim covers the child while the child's claim is only pending.
    expect(await isDomainServable(app.sql, parent.org, `www.${shop}`, now())).toBe(true);
    expect(await isDomainServable(app.sql, team.org, `www.${shop}`, now())).toBe(false);

    // The team proves shop.<domain>: it serves that subtree, the parent keeps the rest.
    dns.setTxt(teamClaim.record_name, teamClaim.record_value);
    expect((await team.api.domainCheck({ path: { id: team.org, domain: shop } })).status).toBe('verified');
    expect(await isDomainServable(app.sql, team.org, shop, now())).toBe(true);
    expect(await isDomainServable(app.sql, team.org, `www.${shop}`, now())).toBe(true);
    expect(await isDomainServable(app.sql, parent.org, `www.${shop}`, now())).toBe(false);
    expect(await isDomainServable(app.sql, parent.org, `blog.${domain}`, now())).toBe(true);
    expect(await isDomainServable(app.sql, team.org, `blog.${domain}`, now())).toBe(false);
    expect(await isDomainServable(app.sql, team.org, domain, now())).toBe(false);
    // The squatter's pending claim of the same name serves it nothing.
    expect(await isDomainServable(app.sql, other.org, shop, now())).toBe(false);
    // A child claim covers nothing above it, nor a look-alike sibling.
    expect(await isDomainServable(app.sql, team.org, `xshop.${domain}`, now())).toBe(false);
  });

  it('a name in a zone the platform serves is nobody\'s, whatever is claimed above it', async () => {
    const a = await owner('zone');
    const domain = `${unique('parent')}.com`;
    await proven(a, domain);
    const zone = `apps.${domain}`;
    expect(await isDomainServable(app.sql, a.org, `x.${domain}`, app.clock.now(), [zone])).toBe(true);
    expect(await isDomainServable(app.sql, a.org, `x.${zone}`, app.clock.now(), [zone])).toBe(false);
    expect(await isDomainServable(app.sql, a.org, zone, app.clock.now(), [zone])).toBe(false);
  });
});
