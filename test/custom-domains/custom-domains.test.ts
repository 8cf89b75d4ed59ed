// Custom domains end to end (document 2 §2 "Custom domains listing", §3, §4 "Custom domains"; DECISIONS.md
// §6 "DNS and domains"): the listing with the platform host, attach under every seed rule and the shared
// three-way authorization, each refusal reading back that nothing changed, the limit, two services racing
// for one name, availability, detach; then issuance by the local CA (the embedded default) after the
// preflight: the name not pointing here and CAA forbidding are shown on the listing, then the name turns
// active with a certificate the local CA signed, and is renewed at two thirds of its life (frozen clock).
import { randomUUID, X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certifyHttpName } from '../../server/src/certificates/issuance.js';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { taskContextOf } from '../support/task-context.js';
import { startTestDns, type TestDns } from '../support/dns.js';
import { randomPortPool } from '../support/edge.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { startTestPlatformDns, type TestPlatformDns } from '../support/platform-dns.js';
import { outcome, refusal } from '../support/refusal.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

let app: TestApp;
let smtp: TestSmtp;
let dns: TestDns;
let platformDns: TestPlatformDns;
let staff: Staff;
let owner: Caller;
let billing: Caller;
let rivalOwner: Caller;
let orgId: string;
let rivalOrgId: string;
let site: Provisioned;
let shop: Provisioned;
let game: Provisioned;
let rivalSite: Provisioned;
/** A domain the owner's organization proved control of. */
let domain: string;

beforeAll(async () => {
  smtp = await startTestSmtp();
  dns = await startTestDns();
  app = await startTestApp({
    env: {
      SMTP_URL: smtp.url,
      SOURCE_RATE_LIMIT_SCALE: '1000',
      PORT_POOL: randomPortPool(16),
      DNS_SERVERS: dns.server,
      DNS_TIMEOUT_MS: '1000',
    },
  });
  platformDns = await startTestPlatformDns(app);
  staff = await staffMember(app, smtp, 'cd-staff', ['manage_services']);
  [owner, billing, rivalOwner] = await Promise.all([
    signedIn(app, smtp, 'cd-owner'),
    signedIn(app, smtp, 'cd-billing'),
    signedIn(app, smtp, 'cd-rival'),
  ]);
  const tag = Date.now().toString(36);
  orgId = (await owner.api.organizationCreate({ body: { name: 'Sites', slug: `sites-${tag}` } })).id;
  rivalOrgId = (await rivalOwner.api.organizationCreate({ body: { name: 'Rival', slug: `rival-${tag}` } }))
    .id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: billing.userId, role: 'billing' } });
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Sites', slug: 'sites' } })
  ).id;
  const rivalProject = (
    await rivalOwner.api.projectCreate({ path: { id: rivalOrgId }, body: { name: 'Rival', slug: 'rival' } })
  ).id;
  [site, shop, game, rivalSite] = await Promise.all([
    provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Site' }),
    provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Shop' }),
    provisionService(staff.elevated, { projectId, productSlug: 'block-game', name: 'Castle' }),
    provisionService(staff.elevated, { projectId: rivalProject, productSlug: 'web-app', name: 'Rival' }),
  ]);
  domain = `sites-${tag}.com`;
  const claim = await owner.api.domainAdd({ path: { id: orgId }, body: { domain } });
  dns.setTxt(claim.record_name, claim.record_value);
  expect((await owner.api.domainCheck({ path: { id: orgId, domain } })).status).toBe('verified');
}, 240_000);
afterAll(async () => {
  await platformDns?.stop();
  await app?.close();
  await dns?.close();
  await smtp?.close();
});

const list = (c: Caller, p: Provisioned = site) =>
  c.api.customDomainList({ path: { id: p.serviceInstanceId } });
const attach = (c: Caller, hostname: string, p: Provisioned = site) =>
  c.api.customDomainAttach({ path: { id: p.serviceInstanceId }, body: { hostname } });
const check = (c: Caller, hostname: string, p: Provisioned = site) =>
  c.api.customDomainAvailability({ path: { id: p.serviceInstanceId }, query: { hostname } });
const detach = (c: Caller, routeId: string, p: Provisioned = site) =>
  c.api.customDomainDetach({ path: { id: p.serviceInstanceId, route_id: routeId } });
/** Every held name, as stored: what a refusal must leave alone. */
const names = () =>
  app.sql`select id, hostname, service_instance_id, kind, status from http_names order by hostname`;
const audits = async () => (await auditEntries(app, orgId)).length;

async function refusedWith(p: Promise<unknown>): Promise<[number, string, unknown]> {
  const e = await refusal(p);
  return [e.status, e.code, e.details ?? undefined];
}

/** Runs the issuance sweep at the app's clock and waits for the attempts it enqueued. */
async function sweep(): Promise<void> {
  await app.worker!.run('renew_certificates');
  await app.worker!.runDue({ task: 'issue_certificate' });
}

async function slugOf(p: Provisioned): Promise<string> {
  const [row] = await app.sql<
    { slug: string }[]
  >`select slug from service_instances where id = ${p.serviceInstanceId}`;
  return row!.slug;
}

describe('custom domain routes', () => {
  it('lists the platform host, the limit and no names', async () => {
    const host = `${await slugOf(site)}-${site.serviceInstanceId.slice(0, 8)}.apps.${app.config.platformDomain}`;
    expect(await list(owner)).toEqual({
      platform_host: host,
      platform_url: `https://${host}`,
      limit: 10,
      domains: [],
    });
    // Billing members read; they do not attach.
    expect((await list(billing)).limit).toBe(10);
  });

  it('is the 404 of an unknown id for a product without custom domains, a stranger, a reader writing', async () => {
    const before = await names();
    const auditsBefore = await audits();
    expect(await outcome(list(owner, game))).toEqual([404, 'not-found']);
    expect(await outcome(attach(owner, `www.${domain}`, game))).toEqual([404, 'not-found']);
    expect(await outcome(list(rivalOwner))).toEqual([404, 'not-found']);
    expect(await outcome(attach(rivalOwner, `www.${domain}`))).toEqual([404, 'not-found']);
    expect(await outcome(check(rivalOwner, `www.${domain}`))).toEqual([404, 'not-found']);
    expect(await outcome(attach(billing, `www.${domain}`))).toEqual([404, 'not-found']);
    expect(await outcome(check(billing, `www.${domain}`))).toEqual([404, 'not-found']);
    expect(await outcome(owner.api.customDomainList({ path: { id: UNKNOWN } }))).toEqual([404, 'not-found']);
    expect(await names()).toEqual(before);
    expect(await audits()).toBe(auditsBefore);
  });

  it('refuses names by the seed rules and the three-way authorization, storing nothing', async () => {
    const before = await names();
    const auditsBefore = await audits();
    for (const bad of [
      '',
      'localhost',
      '10.0.0.1',
      `-a.${domain}`,
      `a..${domain}`,
      `a_b.${domain}`,
      `${'a'.repeat(64)}.${domain}`,
    ]) {
      expect(await outcome(attach(owner, bad)), bad).toEqual([400, 'invalid-field-value']);
    }
    expect(await refusedWith(attach(owner, `x.${app.config.platformDomain}`))).toEqual([
      422,
      'http-name-refused',
      'platform_zone',
    ]);
    expect(await refusedWith(attach(owner, 'play.test'))).toEqual([
      422,
      'http-name-refused',
      'platform_zone',
    ]);
    expect(await refusedWith(attach(owner, 'a.b.play.test'))).toEqual([
      422,
      'http-name-refused',
      'platform_zone',
    ]);
    expect(await refusedWith(attach(owner, 'www.unproven-example.com'))).toEqual([
      422,
      'http-name-refused',
      'not_verified',
    ]);
    // Another organization's proven name answers exactly as an unproven one.
    const theirs = await refusal(attach(rivalOwner, `www.${domain}`, rivalSite));
    const unproven = await refusal(attach(rivalOwner, 'www.unproven-example.com', rivalSite));
    expect([theirs.status, theirs.code]).toEqual([unproven.status, unproven.code]);
    expect(await names()).toEqual(before);
    expect(await audits()).toBe(auditsBefore);
  });

  it('attaches a name pending its certificate, audited; attaching it again changes nothing', async () => {
    const made = await attach(owner, `  WWW.${domain.toUpperCase()}. `);
    expect(made).toEqual({
      id: expect.any(String),
      hostname: `www.${domain}`,
      status: 'pending',
      status_reason: expect.any(String),
      url: `https://www.${domain}`,
      certificate_expires_at: null,
      created_at: expect.any(String),
    });
    const auditsAfter = await audits();
    expect(await attach(owner, `www.${domain}`)).toMatchObject({ id: made.id, hostname: made.hostname });
    expect(await audits()).toBe(auditsAfter);
    expect((await list(owner)).domains.map((d) => d.id)).toEqual([made.id]);
    const [entry] = (await auditEntries(app, orgId)).filter((a) => a.action === 'custom_domain.attached');
    expect(entry).toMatchObject({ target_type: 'custom_domain', target_id: made.id });
    // Held by this service: another service of the organization is refused, and it reads taken.
    const before = await names();
    expect(await refusedWith(attach(owner, `www.${domain}`, shop))).toEqual([
      422,
      'http-name-refused',
      'taken',
    ]);
    expect(await names()).toEqual(before);
    expect(await check(owner, `www.${domain}`, shop)).toEqual({ status: 'taken', reason: null });
    expect(await check(owner, `www.${domain}`)).toEqual({ status: 'taken', reason: null });
    await detach(owner, made.id);
  });

  it('answers availability with every status', async () => {
    expect(await check(owner, `api.${domain}`)).toEqual({ status: 'available', reason: null });
    expect(await check(owner, 'no_way')).toMatchObject({ status: 'invalid', reason: expect.any(String) });
    expect(await check(owner, `x.${app.config.platformDomain}`)).toEqual({
      status: 'platform_zone',
      reason: null,
    });
    expect(await check(owner, 'www.unproven-example.com')).toEqual({ status: 'not_verified', reason: null });
    expect(await check(owner, 'mysite.play.test')).toEqual({ status: 'available', reason: null });
  });

  it('takes a single label under a parent domain without a claim, and the platform DNS answers it', async () => {
    const made = await attach(owner, 'mysite.play.test');
    expect(made.status).toBe('pending');
    // Another organization cannot have it: the same answer as an unproven name.
    expect(await refusedWith(attach(rivalOwner, 'mysite.play.test', rivalSite))).toEqual([
      422,
      'http-name-refused',
      'not_verified',
    ]);
    await platformDns.caughtUp();
    expect((await platformDns.ask('mysite.play.test', 'A')).answers).toEqual([
      `A mysite.play.test ${app.config.host}`,
    ]);
    // The game subdomain of the same name is taken.
    const zones = (await owner.api.gameSubdomainList({ path: { id: game.serviceInstanceId } })).zones;
    const play = zones.find((z) => z.name === 'play.test')!;
    expect(
      await owner.api.gameSubdomainAvailability({
        path: { id: game.serviceInstanceId },
        query: { parent_domain_id: play.id, subdomain: 'mysite' },
      }),
    ).toEqual({ status: 'taken', reason: null });
    expect(
      await refusedWith(
        owner.api.gameSubdomainCreate({
          path: { id: game.serviceInstanceId },
          body: { parent_domain_id: play.id, subdomain: 'mysite' },
        }),
      ),
    ).toEqual([422, 'game-subdomain-refused', 'subdomain_taken']);
    await detach(owner, made.id);
    await platformDns.caughtUp();
    expect((await platformDns.ask('mysite.play.test', 'A')).rcode).toBe('NXDOMAIN');
  });

  it('stops at the limit of 10, under the service lock, with parallel attaches', async () => {
    const hostnames = Array.from({ length: 12 }, (_, i) => `n${i}.${domain}`);
    const results = await Promise.all(hostnames.map((h) => outcome(attach(owner, h, shop))));
    expect(results.filter((r) => r === 'ok')).toHaveLength(10);
    expect(results.filter((r) => r !== 'ok')).toEqual([
      [422, 'custom-domain-limit-reached'],
      [422, 'custom-domain-limit-reached'],
    ]);
    const listed = await list(owner, shop);
    expect(listed.domains).toHaveLength(10);
    const before = await names();
    expect(await refusedWith(attach(owner, `more.${domain}`, shop))).toEqual([
      422,
      'custom-domain-limit-reached',
      { limit: 10 },
    ]);
    expect(await names()).toEqual(before);
    for (const d of listed.domains) await detach(owner, d.id, shop);
    expect((await list(owner, shop)).domains).toEqual([]);
  });

  it('lets one of two services racing for a name win', async () => {
    const results = await Promise.all([
      outcome(attach(owner, `race.${domain}`)),
      outcome(attach(owner, `race.${domain}`, shop)),
    ]);
    expect(results.filter((r) => r === 'ok')).toHaveLength(1);
    expect(results).toContainEqual([422, 'http-name-refused']);
    expect(await app.sql`select 1 from http_names where hostname = ${`race.${domain}`}`).toHaveLength(1);
    for (const p of [site, shop])
      for (const d of (await list(owner, p)).domains) await detach(owner, d.id, p);
  });

  it('detaches: 404 alike for another service’s row and an unknown id; the name, its certificate and challenges go', async () => {
    const made = await attach(owner, `gone.${domain}`);
    const before = await names();
    const auditsBefore = await audits();
    expect(await outcome(detach(owner, made.id, shop))).toEqual([404, 'not-found']);
    expect(await outcome(detach(owner, UNKNOWN))).toEqual([404, 'not-found']);
    expect(await outcome(detach(rivalOwner, made.id))).toEqual([404, 'not-found']);
    expect(await outcome(detach(billing, made.id))).toEqual([404, 'not-found']);
    expect(await names()).toEqual(before);
    expect(await audits()).toBe(auditsBefore);
    await app.sql`
      insert into acme_challenges (token, hostname, key_authorization, created_at)
      values ('tok-gone', ${made.hostname}, 'k', now())`;
    await detach(owner, made.id);
    expect(await app.sql`select 1 from http_names where hostname = ${made.hostname}`).toHaveLength(0);
    expect(await app.sql`select 1 from tls_certificates where hostname = ${made.hostname}`).toHaveLength(0);
    expect(await app.sql`select 1 from acme_challenges where hostname = ${made.hostname}`).toHaveLength(0);
    expect((await auditEntries(app, orgId)).map((a) => a.action)).toContain('custom_domain.detached');
    expect(await check(owner, made.hostname)).toEqual({ status: 'available', reason: null });
  });

  it('refuses a suspended service’s attach and still lists it', async () => {
    await staff.elevated.adminSubscriptionSuspend({ path: { id: shop.subscriptionId } });
    try {
      const before = await names();
      expect(await refusedWith(attach(owner, `paused.${domain}`, shop))).toEqual([
        422,
        'subscription-not-serviceable',
        undefined,
      ]);
      expect(await names()).toEqual(before);
      expect((await list(owner, shop)).limit).toBe(10);
    } finally {
      await staff.elevated.adminSubscriptionResume({ path: { id: shop.subscriptionId } });
    }
  });
});

describe('issuance by the local CA', () => {
  it('waits while the name does not point here, shows why, then issues; CAA binds only a CA with identities', async () => {
    const hostname = `secure.${domain}`;
    const made = await attach(owner, hostname);
    await app.worker!.runDue({ task: 'issue_certificate' });
    let row = (await list(owner)).domains.find((d) => d.id === made.id)!;
    expect(row.status).toBe('pending');
    expect(row.status_reason).toContain('does not resolve');

    // The retry is due 30 s later, by the app's clock (the sweep runs every minute).
    dns.setAddresses(hostname, '192.0.2.7');
    app.clock.advance(2 * 60_000);
    await sweep();
    row = (await list(owner)).domains.find((d) => d.id === made.id)!;
    expect(row).toMatchObject({ status: 'pending', status_reason: expect.stringContaining('192.0.2.7') });

    // The local CA is no public CA: CAA naming another CA does not hold it back.
    dns.setAddresses(hostname, app.config.host);
    dns.setCaa(domain, { tag: 'issue', value: 'letsencrypt.org' });
    app.clock.advance(3 * 60_000);
    await sweep();
    row = (await list(owner)).domains.find((d) => d.id === made.id)!;
    expect(row).toMatchObject({
      status: 'active',
      status_reason: null,
      certificate_expires_at: expect.any(String),
    });

    const [stored] = await app.sql<
      {
        certificate_pem: string;
        issuer: string;
        private_key_sealed: string;
        not_before: Date;
        not_after: Date;
      }[]
    >`
      select certificate_pem, issuer, private_key_sealed, not_before, not_after from tls_certificates where hostname = ${hostname}`;
    expect(stored!.issuer).toBe('local');
    expect(stored!.private_key_sealed).not.toContain('PRIVATE KEY');
    const leaf = new X509Certificate(stored!.certificate_pem);
    expect(leaf.checkHost(hostname)).toBe(hostname);
    expect(new Date(row.certificate_expires_at!).getTime()).toBe(stored!.not_after.getTime());
    await detach(owner, made.id);
  });

  it('renews an active certificate at two thirds of its lifetime, not before (frozen clock)', async () => {
    const hostname = `renew.${domain}`;
    dns.setAddresses(hostname, app.config.host);
    const made = await attach(owner, hostname);
    await app.worker!.runDue({ task: 'issue_certificate' });
    expect((await list(owner)).domains.find((d) => d.id === made.id)!.status).toBe('active');
    const certOf = async () =>
      (
        await app.sql<{ not_before: Date; not_after: Date; certificate_pem: string }[]>`
        select not_before, not_after, certificate_pem from tls_certificates where hostname = ${hostname}`
      )[0]!;
    const first = await certOf();
    const back = app.clock.now();
    const lifetime = first.not_after.getTime() - first.not_before.getTime();
    try {
      app.clock.set(new Date(first.not_before.getTime() + lifetime * 0.6));
      await sweep();
      expect((await certOf()).certificate_pem).toBe(first.certificate_pem);
      app.clock.set(new Date(first.not_before.getTime() + lifetime * 0.7));
      await sweep();
      const renewed = await certOf();
      expect(renewed.not_after.getTime()).toBeGreaterThan(first.not_after.getTime());
      expect(renewed.certificate_pem).not.toBe(first.certificate_pem);
      const [state] =
        await app.sql`select status, status_reason, attempts from http_names where id = ${made.id}`;
      expect(state).toEqual({ status: 'active', status_reason: null, attempts: 0 });
    } finally {
      app.clock.set(back);
    }
    await detach(owner, made.id);
  });
  it('runs one attempt per name at a time: of two racing, one issues and the other leaves it be', async () => {
    const hostname = `race.${domain}`;
    dns.setAddresses(hostname, app.config.host);
    // The name's row as an attach makes it, without the attach's own job: the two attempts below are
    // the only ones.
    const id = randomUUID();
    const now = app.clock.now();
    await app.sql`
      insert into http_names (id, hostname, service_instance_id, organization_id, kind, status, created_at, updated_at)
      values (${id}, ${hostname}, ${site.serviceInstanceId}, ${orgId}, 'custom_domain', 'pending', ${now}, ${now})`;
    const ctx = taskContextOf(app);
    const outcomes = await Promise.all([certifyHttpName(ctx, id), certifyHttpName(ctx, id)]);
    expect(outcomes.sort()).toEqual(['busy', 'issued']);
    const [row] = await app.sql`select status, attempts, issuing_until from http_names where id = ${id}`;
    expect(row).toEqual({ status: 'active', attempts: 0, issuing_until: null });
    // Once it is active, a late attempt has nothing due to do.
    expect(await certifyHttpName(ctx, id)).toBe('not-due');
    await app.sql`delete from http_names where id = ${id}`;
    await app.sql`delete from tls_certificates where hostname = ${hostname}`;
  });
});
