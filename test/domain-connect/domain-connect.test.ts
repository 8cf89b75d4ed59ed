// Domain Connect links end to end (document 2 §2 "Domain connect link", §3, §4 "Domain connect", §8;
// DECISIONS.md §6 "DNS and domains"): discovery through the customer's zone (the test DNS server) and a
// real DNS provider API on loopback, the signed apply URL checked with the public key the operator
// publishes, verify's three outcomes against live SRV records, release, the seed's refusals each
// reading back that nothing changed (a provider on a private address outside the allowed networks
// included), the limit of 20 under parallel requests, 404 for products without the feature and 501
// while the deployment capability is off.
import { createPublicKey, generateKeyPairSync, randomUUID, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publicKeyRecords } from '../../server/src/features/domain-connect/apply-url.js';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { startTestDns, type TestDns } from '../support/dns.js';
import { eventually } from '../jobs/support.js';
import { startTestProvider, syncSettings, type TestProvider } from '../support/domain-connect-provider.js';
import { randomPortPool } from '../support/edge.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { refusal } from '../support/refusal.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

const PLATFORM = 'svcplatform.net';
const TEMPLATE = { providerId: 'svcplatform.net', serviceId: 'minecraft-srv' };
const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

let app: TestApp;
let smtp: TestSmtp;
let dns: TestDns;
let provider: TestProvider;
/** A provider on 127.0.0.2, outside DOMAIN_CONNECT_ALLOWED_NETWORKS: it must never be asked. */
let outside: TestProvider;
let staff: Staff;
let owner: Caller;
let billing: Caller;
let stranger: Caller;
let orgId: string;
let game: Provisioned;
let rival: Provisioned;
let crowd: Provisioned;
let web: Provisioned;

/** A customer's domain whose `_domainconnect` names the loopback provider (by a name in their zone). */
function customerDomain(domain: string, settings: Record<string, unknown> = {}): void {
  dns.setTxt(`_domainconnect.${domain}`, `api.dnsprovider.com:${provider.port}`);
  provider.settings.set(domain, syncSettings(`api.dnsprovider.com:${provider.port}`, settings));
}

beforeAll(async () => {
  smtp = await startTestSmtp();
  dns = await startTestDns();
  provider = await startTestProvider();
  outside = await startTestProvider('127.0.0.2');
  provider.templates.add(`${TEMPLATE.providerId}/${TEMPLATE.serviceId}`);
  dns.setAddresses('api.dnsprovider.com', '127.0.0.1');
  app = await startTestApp({
    env: {
      SMTP_URL: smtp.url,
      SOURCE_RATE_LIMIT_SCALE: '1000',
      PORT_POOL: randomPortPool(16),
      PLATFORM_DOMAIN: PLATFORM,
      DNS_SERVERS: dns.server,
      CAPABILITIES: 'domain_connect',
      DOMAIN_CONNECT_ALLOWED_NETWORKS: '127.0.0.1/32',
      DOMAIN_CONNECT_PROVIDER_ID: TEMPLATE.providerId,
      DOMAIN_CONNECT_SERVICE_ID: TEMPLATE.serviceId,
      DOMAIN_CONNECT_SIGNING_KEY: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    },
  });
  staff = await staffMember(app, smtp, 'dc-staff', ['manage_services']);
  [owner, billing, stranger] = await Promise.all([
    signedIn(app, smtp, 'dc-owner'),
    signedIn(app, smtp, 'dc-billing'),
    signedIn(app, smtp, 'dc-stranger'),
  ]);
  orgId = (
    await owner.api.organizationCreate({ body: { name: 'Connect', slug: `dc-${Date.now().toString(36)}` } })
  ).id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: billing.userId, role: 'billing' } });
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Games', slug: 'games' } })
  ).id;
  [game, rival, crowd, web] = await Promise.all([
    provisionService(staff.elevated, { projectId, productSlug: 'block-game', name: 'Castle' }),
    provisionService(staff.elevated, { projectId, productSlug: 'block-game', name: 'Rival' }),
    provisionService(staff.elevated, { projectId, productSlug: 'block-game', name: 'Crowd' }),
    provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Site' }),
  ]);
}, 180_000);
afterAll(async () => {
  await app?.close();
  await provider?.close();
  await outside?.close();
  await dns?.close();
  await smtp?.close();
});

const list = (c: Caller, p: Provisioned = game) =>
  c.api.domainConnectList({ path: { id: p.serviceInstanceId } });
const link = (c: Caller, domain: string, host?: string, p: Provisioned = game) =>
  c.api.domainConnectLink({
    path: { id: p.serviceInstanceId },
    body: host === undefined ? { domain } : { domain, host },
  });
const verifyLink = (c: Caller, linkId: string, p: Provisioned = game) =>
  c.api.domainConnectVerify({ path: { id: p.serviceInstanceId, link_id: linkId } });
const release = (c: Caller, linkId: string, p: Provisioned = game) =>
  c.api.domainConnectRelease({ path: { id: p.serviceInstanceId, link_id: linkId } });
const rows = () =>
  app.sql`select id, service_instance_id, domain, host, status, last_error, last_verified_at
          from domain_connect_links order by id`;

async function expectedSrv(p: Provisioned): Promise<{ target: string; port: number }> {
  const [row] = await app.sql<{ slug: string; port: number }[]>`
    select s.slug, a.external_port as port from service_instances s
    join port_allocations a on a.service_instance_id = s.id and a.is_primary where s.id = ${p.serviceInstanceId}`;
  return { target: `${row!.slug}-${p.serviceInstanceId.slice(0, 8)}.${PLATFORM}`, port: row!.port };
}

async function refusedWith(p: Promise<unknown>): Promise<[number, string, unknown]> {
  const e = await refusal(p);
  return [e.status, e.code, e.details];
}

describe('linking', () => {
  it('discovers the provider and answers the pending link with a signed apply URL the published key verifies', async () => {
    customerDomain('castle-games.com');
    const srv = await expectedSrv(game);
    const made = await link(owner, ' Castle-Games.com ', 'Play');
    expect(made).toMatchObject({
      domain: 'castle-games.com',
      host: 'play',
      hostname: 'play.castle-games.com',
      status: 'pending',
      dns_provider_display_name: 'DNS Provider Inc.',
      template_confirmed: true,
      last_error: null,
      last_verified_at: null,
      srv_target: srv.target,
      srv_port: srv.port,
    });
    // Discovery asked the customer's zone, then the provider (over http: a loopback provider inside
    // the allowed networks), and the template lookup at its urlAPI.
    expect(dns.queries).toContain('TXT _domainconnect.castle-games.com');
    expect(provider.requests).toEqual(
      expect.arrayContaining([
        'GET /v2/castle-games.com/settings',
        `GET /v2/domainTemplates/providers/${TEMPLATE.providerId}/services/${TEMPLATE.serviceId}`,
      ]),
    );

    const url = new URL(made.apply_url!);
    expect(`${url.origin}${url.pathname}`).toBe(
      `http://api.dnsprovider.com:${provider.port}/sync/v2/domainTemplates/providers/${TEMPLATE.providerId}/services/${TEMPLATE.serviceId}/apply`,
    );
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      domain: 'castle-games.com',
      host: 'play',
      target: srv.target,
      port: String(srv.port),
      key: '_dcpubkeyv1',
    });
    // The provider's check: the signature over the query before `&sig=`, with the key from the TXT
    // records the operator publishes (npm run admin -- domain-connect public-key).
    const query = url.search.slice(1);
    const signed = query.slice(0, query.indexOf('&sig='));
    const records = publicKeyRecords(privateKey);
    const der = Buffer.from(records.map((r) => /,d=(.*)$/.exec(r)![1]).join(''), 'base64');
    const publicKey = createPublicKey({ key: der, format: 'der', type: 'spki' });
    const sig = Buffer.from(url.searchParams.get('sig')!, 'base64');
    expect(verify('sha256', Buffer.from(signed), publicKey, sig)).toBe(true);
    expect(verify('sha256', Buffer.from(signed.replace('play', 'evil')), publicKey, sig)).toBe(false);

    const listed = await list(billing);
    expect(listed.supported).toBe(true);
    expect(listed.links).toEqual([made]);
    const audit = await auditEntries(app, orgId);
    expect(audit).toContainEqual(
      expect.objectContaining({ action: 'domain_connect.linked', target_id: made.id }),
    );
  });

  it('links an apex, and says the template is not confirmed when the provider lacks it', async () => {
    customerDomain('apex-games.com', {
      providerDisplayName: undefined,
      urlAPI: `http://api.dnsprovider.com:${provider.port}/other`,
    });
    const made = await link(owner, 'apex-games.com');
    expect(made).toMatchObject({
      host: '',
      hostname: 'apex-games.com',
      template_confirmed: false,
      dns_provider_display_name: 'DNSProvider',
    });
    expect(new URL(made.apply_url!).searchParams.has('host')).toBe(false);
  });

  it("refuses each of the seed's cases, changing nothing", async () => {
    customerDomain('nosync-games.com', { urlSyncUX: undefined });
    dns.setTxt(`_domainconnect.private-games.com`, `api.private-dns.com:${outside.port}`);
    dns.setAddresses('api.private-dns.com', '127.0.0.2');
    dns.setTxt(`_domainconnect.lan-games.com`, 'api.lan-dns.com');
    dns.setAddresses('api.lan-dns.com', '10.1.2.3');
    const before = await rows();
    const audits = (await auditEntries(app, orgId)).length;
    expect(await refusedWith(link(owner, 'castle-games.com', 'play'))).toEqual([
      422,
      'domain-connect-refused',
      'already_linked',
    ]);
    expect(await refusedWith(link(owner, PLATFORM, 'mine'))).toEqual([
      422,
      'domain-connect-refused',
      'platform_domain',
    ]);
    expect(await refusedWith(link(owner, 'nothing-here.com'))).toEqual([
      422,
      'domain-connect-refused',
      'no_discovery_record',
    ]);
    expect(await refusedWith(link(owner, 'nosync-games.com'))).toEqual([
      422,
      'domain-connect-refused',
      'no_synchronous_flow',
    ]);
    // SSRF: a provider on a private address outside DOMAIN_CONNECT_ALLOWED_NETWORKS is never asked.
    expect(await refusedWith(link(owner, 'private-games.com'))).toEqual([
      422,
      'domain-connect-refused',
      'provider_address_refused',
    ]);
    expect(await refusedWith(link(owner, 'lan-games.com'))).toEqual([
      422,
      'domain-connect-refused',
      'provider_address_refused',
    ]);
    expect(outside.requests).toEqual([]);
    expect((await refusal(link(owner, 'play.castle-games.com'))).code).toBe('invalid-field-value');
    expect((await refusal(link(owner, 'castle-games.com', 'a.b'))).code).toBe('invalid-field-value');
    // Billing members read but do not link; strangers and unknown ids see nothing.
    expect((await refusal(link(billing, 'castle-games.com', 'other'))).status).toBe(404);
    expect((await refusal(link(stranger, 'castle-games.com', 'other'))).status).toBe(404);
    expect((await refusal(list(stranger))).status).toBe(404);
    expect((await refusal(owner.api.domainConnectList({ path: { id: UNKNOWN } }))).status).toBe(404);
    expect(await rows()).toEqual(before);
    expect((await auditEntries(app, orgId)).length).toBe(audits);
  });

  it('answers 404 for a product without Domain Connect, as for an unknown id', async () => {
    const unknown = await refusal(owner.api.domainConnectList({ path: { id: UNKNOWN } }));
    for (const call of [() => list(owner, web), () => link(owner, 'castle-games.com', 'web', web)]) {
      const e = await refusal(call());
      expect([e.status, e.code, e.detail]).toEqual([unknown.status, unknown.code, unknown.detail]);
    }
  });

  it('answers 501 capability-not-available on every route while the capability is off', async () => {
    const before = await rows();
    const [first] = await list(owner).then((l) => l.links);
    app.config.capabilities.domain_connect = false;
    try {
      for (const call of [
        () => list(owner),
        () => list(owner, web),
        () => link(owner, 'castle-games.com', 'more'),
        () => verifyLink(owner, first!.id),
        () => release(owner, first!.id),
      ]) {
        expect(await refusedWith(call())).toEqual([501, 'capability-not-available', null]);
      }
    } finally {
      app.config.capabilities.domain_connect = true;
    }
    expect(await rows()).toEqual(before);
  });
});

describe('a slow provider', () => {
  it('is asked with no transaction open; a keyed retry answers the first answer again without asking', async () => {
    customerDomain('slow-games.com');
    let answer!: () => void;
    provider.stalls.set('slow-games.com', new Promise<void>((resolve) => (answer = resolve)));
    const key = randomUUID();
    const keyed = () =>
      owner.api.domainConnectLink({
        path: { id: rival.serviceInstanceId },
        body: { domain: 'slow-games.com' },
        header: { 'Idempotency-Key': key },
      });
    const settings = 'GET /v2/slow-games.com/settings';
    const pending = keyed();
    await eventually(async () => provider.requests.includes(settings));
    // Nothing of the request's is held while the provider is silent: no transaction open since before it
    // was asked (one is open across the ask when discovery runs inside it).
    const [seen] = await app.sql<{ at: Date }[]>`select clock_timestamp() as at`;
    const held = await app.sql`
      select state, xact_start from pg_stat_activity
      where datname = current_database() and state like 'idle in transaction%' and xact_start < ${seen!.at}`;
    expect(held).toEqual([]);
    answer();
    const first = await pending;
    expect(first).toMatchObject({ domain: 'slow-games.com', host: '', status: 'pending' });
    expect(await keyed()).toEqual(first);
    expect(provider.requests.filter((r) => r === settings)).toHaveLength(1);
    const [n] = await app.sql<{ n: number }[]>`
      select count(*)::int as n from domain_connect_links where domain = 'slow-games.com'`;
    expect(n!.n).toBe(1);
    // The same key with another request is refused before anything is asked.
    const other = await refusal(
      owner.api.domainConnectLink({
        path: { id: rival.serviceInstanceId },
        body: { domain: 'slow-games.com', host: 'www' },
        header: { 'Idempotency-Key': key },
      }),
    );
    expect([other.status, other.code]).toEqual([422, 'idempotency-key-reused']);
    expect(provider.requests.filter((r) => r === settings)).toHaveLength(1);
  });
});

describe('verify', () => {
  it('reads the SRV live: none pending, a matching one active, another one failed', async () => {
    const made = (await list(owner)).links.find((l) => l.hostname === 'play.castle-games.com')!;
    const srvName = '_minecraft._tcp.play.castle-games.com';
    dns.remove(srvName);
    const t0 = app.clock.now().toISOString();
    const none = await verifyLink(owner, made.id);
    expect(none).toMatchObject({ status: 'pending', last_error: null, last_verified_at: t0 });
    expect(dns.queries).toContain(`SRV ${srvName}`);

    dns.setSrv(srvName, { target: made.srv_target, port: made.srv_port });
    app.clock.advance(60_000);
    expect(await verifyLink(owner, made.id)).toMatchObject({
      status: 'active',
      last_error: null,
      last_verified_at: app.clock.now().toISOString(),
    });

    dns.setSrv(srvName, { target: 'elsewhere.example.net', port: 25565 });
    const failed = await verifyLink(owner, made.id);
    expect(failed.status).toBe('failed');
    expect(failed.last_error).toContain('elsewhere.example.net:25565');
    expect((await list(owner)).links.find((l) => l.id === made.id)).toEqual(failed);

    // Another service's link, and an unknown one: 404, nothing changed.
    const before = await rows();
    expect((await refusal(verifyLink(owner, made.id, rival))).status).toBe(404);
    expect((await refusal(verifyLink(owner, UNKNOWN))).status).toBe(404);
    expect((await refusal(verifyLink(billing, made.id))).status).toBe(404);
    expect(await rows()).toEqual(before);
    dns.remove(srvName);
  });
});

describe('release', () => {
  it("releases the service's own link only, asking nothing of the provider", async () => {
    const made = (await list(owner)).links.find((l) => l.hostname === 'apex-games.com')!;
    const before = await rows();
    expect((await refusal(release(owner, made.id, rival))).status).toBe(404);
    expect((await refusal(release(billing, made.id))).status).toBe(404);
    expect(await rows()).toEqual(before);
    const asked = provider.requests.length;
    await release(owner, made.id);
    expect(provider.requests.length).toBe(asked);
    expect((await list(owner)).links.map((l) => l.id)).not.toContain(made.id);
    expect((await refusal(release(owner, made.id))).status).toBe(404);
    expect(await auditEntries(app, orgId)).toContainEqual(
      expect.objectContaining({ action: 'domain_connect.released', target_id: made.id }),
    );
  });
});

describe('the limit of 20', () => {
  it('holds under parallel requests', async () => {
    for (let i = 0; i < 24; i += 1) customerDomain(`crowd${i}-games.com`);
    for (let i = 0; i < 18; i += 1) await link(owner, `crowd${i}-games.com`, '', crowd);
    const outcomes = await Promise.allSettled(
      [18, 19, 20, 21, 22, 23].map((i) => link(owner, `crowd${i}-games.com`, '', crowd)),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(2);
    for (const o of outcomes.filter((o) => o.status === 'rejected')) {
      const e = (o as PromiseRejectedResult).reason as { status: number; code: string; details: unknown };
      expect([e.status, e.code, e.details]).toEqual([422, 'domain-connect-limit-reached', { limit: 20 }]);
    }
    const [count] = await app.sql<{ n: number }[]>`
      select count(*)::int as n from domain_connect_links where service_instance_id = ${crowd.serviceInstanceId}`;
    expect(count!.n).toBe(20);
    expect((await list(owner, crowd)).links).toHaveLength(20);
  });
});
