// Claimed domains through the whole stack (seed document 1, "Domain verification", "Domain
// verification status", "Audit and domains"), with the proofs served by a real DNS server on loopback
// that the tests publish records on and withdraw them from. Every refusal reads back that nothing
// changed; every change of status has its audit entry.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { startTestDns, type TestDns } from '../support/dns.js';
import {
  auditCount,
  auditEntries,
  auditOf,
  raw,
  signedIn as signIn,
  type Caller,
} from '../support/organizations.js';
import { outcome, refusal } from '../support/refusal.js';
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
      // A server that never answers is given up on quickly, so the timeout case stays fast.
      DNS_TIMEOUT_MS: '300',
      // Under a real public suffix, so only the zone rule refuses its names.
      PLATFORM_DOMAIN: 'cloud.hosting-test.net',
    },
  });
});
afterAll(async () => {
  await app?.close();
  await dns?.close();
  await smtp?.close();
});
beforeEach(() => {
  dns.mode = 'answer';
  dns.chase = false;
});

const signedIn = (tag: string) => signIn(app, smtp, tag);
let n = 0;
const unique = (tag: string) => `${tag}-${Date.now().toString(36)}-${(n += 1)}`;
/** A registrable domain under a real public suffix, new to this run. */
const newDomain = (tag = 'claim') => `${unique(tag)}.com`;
// Minutes, not hours: the callers' access tokens live 15 minutes of the frozen clock.
const MINUTE = 60_000;

async function organization(owner: Caller): Promise<string> {
  return (await owner.api.organizationCreate({ body: { name: 'Domains', slug: unique('dom') } })).id;
}

/** The claims of an organization exactly as stored, for read-backs. */
const stored = (organizationId: string) =>
  app.sql`select * from domain_claims where organization_id = ${organizationId} order by domain`;

describe('POST /organizations/{id}/domains', () => {
  it('makes a pending claim with its TXT challenge (201), audited; a second claim re-reads it (200)', async () => {
    const owner = await signedIn('add');
    const org = await organization(owner);
    const domain = newDomain('Add');
    const made = await raw(
      app,
      owner.token,
      'POST',
      `/organizations/${org}/domains`,
      { domain: domain.toUpperCase() },
      'add-domain',
    );
    expect(made.status).toBe(201);
    const claim = JSON.parse(made.text) as Record<string, unknown>;
    expect(claim).toEqual({
      domain: domain.toLowerCase(),
      record_name: `_svc-challenge.${domain.toLowerCase()}`,
      record_type: 'TXT',
      record_value: expect.stringMatching(/^svc-domain-verification=[0-9A-Za-z]{43}$/),
      status: 'pending',
      first_verified_at: null,
      verified_at: null,
      last_checked_at: null,
      last_error: null,
      lost_since: null,
      grandfathered_until: null,
    });
    expect(await auditOf(app, 'add-domain')).toEqual({
      organization_id: org,
      action: 'domain.added',
      actor_user_id: owner.userId,
      target_type: 'domain',
      target_id: domain.toLowerCase(),
      request_id: 'add-domain',
    });

    // Again, spelled another way: the same claim, the same challenge, nothing recorded.
    const count = await auditCount(app, org);
    const again = await raw(app, owner.token, 'POST', `/organizations/${org}/domains`, {
      domain: `${domain}.`,
    });
    expect(again.status).toBe(200);
    expect(JSON.parse(again.text)).toEqual(claim);
    expect(await auditCount(app, org)).toBe(count);
    expect(await stored(org)).toHaveLength(1);
  });

  it('normalises an internationalised name to A-labels', async () => {
    const owner = await signedIn('idn');
    const org = await organization(owner);
    const label = unique('bücher');
    const claim = await owner.api.domainAdd({
      path: { id: org },
      body: { domain: `${label.toUpperCase()}.DE` },
    });
    expect(claim.domain).toMatch(/^xn--[a-z0-9-]+\.de$/);
    expect(claim.record_name).toBe(`_svc-challenge.${claim.domain}`);
    // The U-label form names the same claim, in the path too.
    expect(await owner.api.domainAdd({ path: { id: org }, body: { domain: `${label}.de` } })).toEqual(claim);
    dns.setTxt(claim.record_name, claim.record_value);
    const checked = await owner.api.domainCheck({ path: { id: org, domain: `${label}.de` } });
    expect(checked.status).toBe('verified');
  });

  it('claims a subdomain a team controls, proven at its own record name; a parent claim is separate', async () => {
    const owner = await signedIn('subdomain');
    const org = await organization(owner);
    const parent = newDomain('bigcorp');
    const claim = await owner.api.domainAdd({ path: { id: org }, body: { domain: `Shop.${parent}.` } });
    expect(claim).toMatchObject({
      domain: `shop.${parent}`,
      record_name: `_svc-challenge.shop.${parent}`,
      status: 'pending',
    });
    dns.setTxt(claim.record_name, claim.record_value);
    expect((await owner.api.domainCheck({ path: { id: org, domain: `shop.${parent}` } })).status).toBe('verified');
    // The parent is not claimed by the child's claim: checking it is an unknown claim.
    const err = await refusal(owner.api.domainCheck({ path: { id: org, domain: parent } }));
    expect([err.status, err.code]).toEqual([404, 'not-found']);
    expect((await stored(org)).map((c) => c.domain)).toEqual([`shop.${parent}`]);
  });

  it.each([
    ['an IP address', '192.0.2.10', /IP address/],
    ['a public suffix alone', 'co.uk', /public suffix/],
    ['an invalid label', 'bad_label.com', /letters, digits/],
    ['a label starting with a hyphen', '-bad.com', /hyphen|not a valid/],
    ['a name over 253 characters', `${'abcdefghi.'.repeat(25)}example.com`, /253/],
    ['a name under no public suffix', 'printer.internal', /public suffix/],
    ['the platform zone', 'Cloud.Hosting-Test.net', /a zone the platform serves/],
    ['a name in the platform zone', 'shop-1.apps.cloud.hosting-test.net', /a zone the platform serves/],
  ])('refuses %s: 400 invalid-field-value, nothing made', async (_what, domain, reason) => {
    const owner = await signedIn('refuse');
    const org = await organization(owner);
    const count = await auditCount(app, org);
    const err = await refusal(owner.api.domainAdd({ path: { id: org }, body: { domain } }));
    expect([err.status, err.code]).toEqual([400, 'invalid-field-value']);
    expect(err.detail).toMatch(reason);
    expect(err.errors).toEqual([{ location: 'body', pointer: '/domain', message: err.detail }]);
    expect(await stored(org)).toEqual([]);
    expect(await auditCount(app, org)).toBe(count);
  });

  it('refuses members below Admin (403) and non-members (404, as for an unknown id), changing nothing', async () => {
    const owner = await signedIn('roles');
    const org = await organization(owner);
    const [admin, billing, member, outsider] = await Promise.all([
      signedIn('admin'),
      signedIn('billing'),
      signedIn('member'),
      signedIn('outsider'),
    ]);
    await owner.api.memberAdd({ path: { id: org }, body: { user_id: admin.userId, role: 'admin' } });
    await owner.api.memberAdd({ path: { id: org }, body: { user_id: billing.userId, role: 'billing' } });
    await owner.api.memberAdd({ path: { id: org }, body: { user_id: member.userId, role: 'member' } });
    const domain = newDomain('roles');
    const claim = await admin.api.domainAdd({ path: { id: org }, body: { domain } });
    const before = await stored(org);
    const count = await auditCount(app, org);

    for (const caller of [billing, member]) {
      expect(
        await outcome(caller.api.domainAdd({ path: { id: org }, body: { domain: newDomain() } })),
      ).toEqual([403, 'forbidden']);
      expect(await outcome(caller.api.domainCheck({ path: { id: org, domain } }))).toEqual([
        403,
        'forbidden',
      ]);
      // Every member reads the claims.
      expect(await caller.api.domainList({ path: { id: org } })).toEqual([claim]);
    }
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const id of [org, unknown]) {
      expect(await outcome(outsider.api.domainList({ path: { id } }))).toEqual([404, 'not-found']);
      expect(await outcome(outsider.api.domainAdd({ path: { id }, body: { domain: newDomain() } }))).toEqual([
        404,
        'not-found',
      ]);
      expect(await outcome(outsider.api.domainCheck({ path: { id, domain } }))).toEqual([404, 'not-found']);
    }
    // A non-member learns nothing from a bad name either: 404 before the name is judged.
    expect(await outcome(outsider.api.domainAdd({ path: { id: org }, body: { domain: 'co.uk' } }))).toEqual([
      404,
      'not-found',
    ]);
    // The 404 for a real organization and an invented one are the same bytes.
    const real = await raw(app, outsider.token, 'GET', `/organizations/${org}/domains`);
    const invented = await raw(app, outsider.token, 'GET', `/organizations/${unknown}/domains`);
    expect(real.text.replace(org, unknown)).toBe(invented.text);
    expect(await stored(org)).toEqual(before);
    expect(await auditCount(app, org)).toBe(count);
  });
});

describe('GET /organizations/{id}/domains', () => {
  it('lists the claims in the order they were made, and only this organization’s', async () => {
    const owner = await signedIn('list');
    const org = await organization(owner);
    const other = await organization(owner);
    expect(await owner.api.domainList({ path: { id: org } })).toEqual([]);
    const first = await owner.api.domainAdd({ path: { id: org }, body: { domain: newDomain('zz') } });
    app.clock.advance(1000);
    const second = await owner.api.domainAdd({ path: { id: org }, body: { domain: newDomain('aa') } });
    await owner.api.domainAdd({ path: { id: other }, body: { domain: newDomain('other') } });
    expect(await owner.api.domainList({ path: { id: org } })).toEqual([first, second]);
  });
});

describe('POST /organizations/{id}/domains/{domain}/check', () => {
  it('pending → verified → lost → verified again, first_verified_at unchanged, each change audited', async () => {
    const owner = await signedIn('cycle');
    const org = await organization(owner);
    const claim = await owner.api.domainAdd({ path: { id: org }, body: { domain: newDomain('cycle') } });
    const check = (requestId: string) =>
      raw(
        app,
        owner.token,
        'POST',
        `/organizations/${org}/domains/${claim.domain}/check`,
        undefined,
        requestId,
      ).then((r) => {
        expect(r.status).toBe(200);
        return JSON.parse(r.text) as typeof claim;
      });

    dns.setTxt(claim.record_name, claim.record_value);
    const t1 = app.clock.now().toISOString();
    const verified = await check('cycle-1');
    expect(verified).toEqual({
      ...claim,
      status: 'verified',
      first_verified_at: t1,
      verified_at: t1,
      last_checked_at: t1,
      last_error: null,
      lost_since: null,
    });
    expect(await auditOf(app, 'cycle-1')).toMatchObject({
      action: 'domain.verified',
      target_id: claim.domain,
    });

    // Found again a minute later: verified_at advances, nothing recorded.
    app.clock.advance(MINUTE);
    const t2 = app.clock.now().toISOString();
    expect(await check('cycle-2')).toMatchObject({
      status: 'verified',
      first_verified_at: t1,
      verified_at: t2,
    });
    expect(
      await auditEntries(app, org).then((rows) => rows.filter((r) => r.request_id === 'cycle-2')),
    ).toEqual([]);

    // The proof replaced by another value: lost.
    dns.setTxt(claim.record_name, 'svc-domain-verification=someone-else');
    app.clock.advance(MINUTE);
    const t3 = app.clock.now().toISOString();
    expect(await check('cycle-3')).toMatchObject({
      status: 'lost',
      first_verified_at: t1,
      verified_at: t2,
      last_checked_at: t3,
      lost_since: t3,
      last_error: `No TXT record with the expected value at ${claim.record_name}. The one TXT record there holds another value.`,
    });
    expect(await auditOf(app, 'cycle-3')).toMatchObject({
      action: 'domain.lost',
      actor_user_id: owner.userId,
    });

    // Gone altogether: still lost, since the first time it was missed.
    dns.remove(claim.record_name);
    app.clock.advance(MINUTE);
    expect(await check('cycle-4')).toMatchObject({
      status: 'lost',
      lost_since: t3,
      last_error: `No TXT record with the expected value at ${claim.record_name}.`,
    });

    // Back: verified again; first_verified_at never moves.
    dns.setTxt(claim.record_name, claim.record_value);
    app.clock.advance(MINUTE);
    const t5 = app.clock.now().toISOString();
    expect(await check('cycle-5')).toMatchObject({
      status: 'verified',
      first_verified_at: t1,
      verified_at: t5,
      lost_since: null,
      last_error: null,
    });
    expect(await auditOf(app, 'cycle-5')).toMatchObject({ action: 'domain.verified' });
    expect((await auditEntries(app, org)).map((e) => e.action)).toEqual([
      'organization.created',
      'domain.added',
      'domain.verified',
      'domain.lost',
      'domain.verified',
    ]);
  });

  it('a first check without the proof fails the claim with the service’s sentence; a later one can still verify it', async () => {
    const owner = await signedIn('failed');
    const org = await organization(owner);
    const claim = await owner.api.domainAdd({ path: { id: org }, body: { domain: newDomain('failed') } });
    const failed = await owner.api.domainCheck({ path: { id: org, domain: claim.domain } });
    expect(failed).toMatchObject({
      status: 'failed',
      first_verified_at: null,
      verified_at: null,
      last_checked_at: app.clock.now().toISOString(),
      last_error: `No TXT record with the expected value at ${claim.record_name}.`,
      lost_since: null,
    });
    expect((await auditEntries(app, org)).at(-1)).toMatchObject({
      action: 'domain.failed',
      target_id: claim.domain,
    });
    dns.setTxt(claim.record_name, claim.record_value);
    expect((await owner.api.domainCheck({ path: { id: org, domain: claim.domain } })).status).toBe(
      'verified',
    );
  });

  it('follows a CNAME from the record name to where the proof is published', async () => {
    const owner = await signedIn('cname');
    const org = await organization(owner);
    const claim = await owner.api.domainAdd({ path: { id: org }, body: { domain: newDomain('cname') } });
    const target = `${unique('proofs')}.dns-host.net`;
    dns.setCname(claim.record_name, target);
    dns.setTxt(target, 'unrelated');
    const missing = await owner.api.domainCheck({ path: { id: org, domain: claim.domain } });
    expect(missing.last_error).toBe(
      `No TXT record with the expected value at ${claim.record_name} (through the CNAME ${target}). The one TXT record there holds another value.`,
    );
    dns.addTxt(target, claim.record_value);
    expect(await owner.api.domainCheck({ path: { id: org, domain: claim.domain } })).toMatchObject({
      status: 'verified',
      last_error: null,
    });
  });

  it('finds the value exactly among many TXT records, one split into several character-strings', async () => {
    const owner = await signedIn('many');
    const org = await organization(owner);
    const claim = await owner.api.domainAdd({ path: { id: org }, body: { domain: newDomain('many') } });
    const [head, tail] = [claim.record_value.slice(0, 20), claim.record_value.slice(20)];
    const others = Array.from({ length: 12 }, (_, i) => `v=other${i} ${'x'.repeat(30)}`);
    // Near misses are not the value: a prefix, a suffix, surrounding spaces.
    dns.setTxt(claim.record_name, ...others, head, ` ${claim.record_value}`, `${claim.record_value}x`);
    expect(await owner.api.domainCheck({ path: { id: org, domain: claim.domain } })).toMatchObject({
      status: 'failed',
      last_error: `No TXT record with the expected value at ${claim.record_name}. The 15 TXT records there hold other values.`,
    });
    dns.setTxt(claim.record_name, ...others, [head, tail]);
    expect((await owner.api.domainCheck({ path: { id: org, domain: claim.domain } })).status).toBe(
      'verified',
    );
  });

  it('DNS servers that never answer make a failed check with a sentence, quickly, never a 5xx', async () => {
    const owner = await signedIn('timeout');
    const org = await organization(owner);
    const pending = await owner.api.domainAdd({ path: { id: org }, body: { domain: newDomain('silent') } });
    const proven = await owner.api.domainAdd({ path: { id: org }, body: { domain: newDomain('proven') } });
    dns.setTxt(proven.record_name, proven.record_value);
    const verifiedAt = app.clock.now().toISOString();
    await owner.api.domainCheck({ path: { id: org, domain: proven.domain } });

    dns.mode = 'silent';
    app.clock.advance(MINUTE);
    const started = Date.now();
    const answer = await raw(
      app,
      owner.token,
      'POST',
      `/organizations/${org}/domains/${pending.domain}/check`,
    );
    expect(Date.now() - started).toBeLessThan(3000);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({
      status: 'failed',
      last_error: 'The DNS servers did not answer in time.',
      last_checked_at: app.clock.now().toISOString(),
    });
    // No answer is no evidence that a proof went: the verified claim stays verified, saying why.
    expect(await owner.api.domainCheck({ path: { id: org, domain: proven.domain } })).toMatchObject({
      status: 'verified',
      verified_at: verifiedAt,
      lost_since: null,
      last_error: 'The DNS servers did not answer in time.',
    });
    dns.mode = 'servfail';
    expect((await owner.api.domainCheck({ path: { id: org, domain: proven.domain } })).last_error).toBe(
      `The DNS servers could not resolve ${proven.record_name} (server failure).`,
    );
  });

  it('answers 404 for a domain the organization has not claimed, 400 for a name that is none, changing nothing', async () => {
    const owner = await signedIn('check-404');
    const org = await organization(owner);
    const other = await signedIn('check-other');
    const theirs = await other.api.domainAdd({
      path: { id: await organization(other) },
      body: { domain: newDomain('theirs') },
    });
    const count = await auditCount(app, org);
    expect(await outcome(owner.api.domainCheck({ path: { id: org, domain: newDomain('never') } }))).toEqual([
      404,
      'not-found',
    ]);
    // Another organization's claim is no claim of this one.
    expect(await outcome(owner.api.domainCheck({ path: { id: org, domain: theirs.domain } }))).toEqual([
      404,
      'not-found',
    ]);
    const bad = await refusal(owner.api.domainCheck({ path: { id: org, domain: 'co.uk' } }));
    expect([bad.status, bad.code]).toEqual([400, 'invalid-field-value']);
    expect(bad.errors).toEqual([{ location: 'path', pointer: 'domain', message: bad.detail }]);
    expect(await stored(org)).toEqual([]);
    expect(await auditCount(app, org)).toBe(count);
  });

  it('limits checks to 20 per claim per 10 minutes (429 with Retry-After), without checking', async () => {
    const owner = await signedIn('limit');
    const org = await organization(owner);
    const claim = await owner.api.domainAdd({ path: { id: org }, body: { domain: newDomain('limit') } });
    for (let i = 0; i < 20; i += 1) await owner.api.domainCheck({ path: { id: org, domain: claim.domain } });
    const before = await stored(org);
    const queries = dns.queries.length;
    app.clock.advance(1000);
    // The organization's id spelled in capitals names the same claim, so the same allowance.
    const limited = await raw(
      app,
      owner.token,
      'POST',
      `/organizations/${org.toUpperCase()}/domains/${claim.domain.toUpperCase()}/check`,
    );
    expect(limited.status).toBe(429);
    expect(JSON.parse(limited.text)).toMatchObject({ code: 'rate-limited' });
    expect(await stored(org)).toEqual(before);
    expect(dns.queries.length).toBe(queries);
    // A minute into the next window the sliding estimate (21 × 0.9 + 1) is under the limit again,
    // whatever the frozen clock's place in its window (and the access token still lives).
    const windowMs = 10 * MINUTE;
    app.clock.advance(windowMs - (app.clock.now().getTime() % windowMs) + MINUTE);
    expect(await outcome(owner.api.domainCheck({ path: { id: org, domain: claim.domain } }))).toBe('ok');
  });
});
