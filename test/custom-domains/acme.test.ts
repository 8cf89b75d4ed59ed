// Custom domains' certificates from a real ACME CA (Debian's pebble) through the edge's real HTTP
// ingress: pebble resolves the name through the test DNS server (the customer's zone, name -> HOST) and
// validates HTTP-01 on the ingress's HTTP port, which answers from `acme_challenges`; the certificate
// the ingress then serves by SNI chains to pebble's root, and an HTTPS request reaches the web app.
// CAA naming another CA holds the name pending, with the reason on the listing.
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { get, httpsGet, listening } from '../edge/http-client.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { startTestDns, type TestDns } from '../support/dns.js';
import { randomPortPool, startTestEdge, type TestEdge } from '../support/edge.js';
import { signedIn, type Caller } from '../support/organizations.js';
import { preparePebble, type TestPebble } from '../support/pebble.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let dns: TestDns;
let edge: TestEdge;
let pebble: TestPebble;
let staff: Staff;
let owner: Caller;
let orgId: string;
let site: Provisioned;
let domain: string;

beforeAll(async () => {
  smtp = await startTestSmtp();
  dns = await startTestDns();
  pebble = await preparePebble();
  app = await startTestApp({
    env: {
      SMTP_URL: smtp.url,
      SOURCE_RATE_LIMIT_SCALE: '1000',
      PORT_POOL: randomPortPool(8),
      DNS_SERVERS: dns.server,
      DNS_TIMEOUT_MS: '1000',
      ACME_DIRECTORY_URL: pebble.directoryUrl,
      ACME_CA_FILE: pebble.tlsCertificateFile,
      // Pebble's directory names no caaIdentities: the deployment says which CAA issuer means it.
      ACME_CAA_IDENTITIES: 'pebble.test',
    },
  });
  edge = await startTestEdge(app);
  await pebble.start({ dnsServer: dns.server, httpPort: edge.edge.ingressHttpPort! });
  staff = await staffMember(app, smtp, 'acme-staff', ['manage_services']);
  owner = await signedIn(app, smtp, 'acme-owner');
  const tag = Date.now().toString(36);
  orgId = (await owner.api.organizationCreate({ body: { name: 'Acme', slug: `acme-${tag}` } })).id;
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Web', slug: 'web' } })
  ).id;
  site = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Site' });
  domain = `acme-${tag}.com`;
  const claim = await owner.api.domainAdd({ path: { id: orgId }, body: { domain } });
  dns.setTxt(claim.record_name, claim.record_value);
  expect((await owner.api.domainCheck({ path: { id: orgId, domain } })).status).toBe('verified');
  const [unit] = await app.sql<{ address: string }[]>`
    select host(address) as address from service_resources where id = ${site.primaryResourceId}`;
  await listening(unit!.address, 8080);
}, 240_000);
afterAll(async () => {
  await pebble?.stop();
  await edge?.stop();
  await app?.close();
  await dns?.close();
  await smtp?.close();
});

const listed = async (id: string) =>
  (await owner.api.customDomainList({ path: { id: site.serviceInstanceId } })).domains.find(
    (d) => d.id === id,
  )!;

/** Polls the listing until the name leaves `pending` after an attempt (ACME takes a few seconds). */
async function settled(id: string, want: 'active' | 'failed' | 'reason', timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await app.worker!.runDue({ task: 'issue_certificate' });
    const row = await listed(id);
    if (want === 'reason' ? row.status_reason?.includes('CAA') : row.status === want) return row;
    if (Date.now() > deadline) throw new Error(`still ${row.status}: ${row.status_reason ?? ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('ACME with pebble', () => {
  it('holds a name whose CAA names another CA pending, saying so', async () => {
    const hostname = `caa.${domain}`;
    dns.setAddresses(hostname, app.config.host);
    dns.setCaa(hostname, { tag: 'issue', value: 'other-ca.example' });
    const made = await owner.api.customDomainAttach({
      path: { id: site.serviceInstanceId },
      body: { hostname },
    });
    const row = await settled(made.id, 'reason');
    expect(row.status).toBe('pending');
    expect(row.status_reason).toContain('pebble.test');
    expect(await app.sql`select 1 from tls_certificates where hostname = ${hostname}`).toHaveLength(0);
    await owner.api.customDomainDetach({ path: { id: site.serviceInstanceId, route_id: made.id } });
  });

  it('issues through HTTP-01 on the ingress; the ingress serves the certificate by SNI and proxies to the app', async () => {
    const hostname = `www.${domain}`;
    dns.setAddresses(hostname, app.config.host);
    dns.setCaa(domain, { tag: 'issue', value: 'pebble.test' });
    const made = await owner.api.customDomainAttach({
      path: { id: site.serviceInstanceId },
      body: { hostname },
    });
    expect(made.status).toBe('pending');
    const row = await settled(made.id, 'active');
    expect(row).toMatchObject({
      status: 'active',
      status_reason: null,
      certificate_expires_at: expect.any(String),
    });
    // The challenge rows are gone once the order is done.
    expect(await app.sql`select 1 from acme_challenges where hostname = ${hostname}`).toHaveLength(0);
    const [stored] = await app.sql<{ issuer: string; certificate_pem: string }[]>`
      select issuer, certificate_pem from tls_certificates where hostname = ${hostname}`;
    expect(stored!.issuer).toBe('acme');
    // The account key is kept sealed.
    const [account] = await app.sql<{ account_key_sealed: string; account_url: string }[]>`
      select account_key_sealed, account_url from acme_accounts`;
    expect(account!.account_key_sealed).not.toContain('PRIVATE KEY');
    expect(account!.account_url).toMatch(/^https:\/\/127\.0\.0\.1:/);

    await edge.caughtUp();
    const root = await pebble.root();
    const answer = await httpsGet(edge.edge.ingressHttpsPort!, {
      servername: hostname,
      host: hostname,
      ca: root,
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('The web app runs.\n');
    const served = new X509Certificate(answer.certificate!.raw);
    expect(served.checkHost(hostname)).toBe(hostname);
    expect(served.serialNumber).toBe(new X509Certificate(stored!.certificate_pem).serialNumber);
    // And over plain HTTP by Host.
    expect((await get(edge.edge.ingressHttpPort!, hostname, '/')).status).toBe(200);

    await owner.api.customDomainDetach({ path: { id: site.serviceInstanceId, route_id: made.id } });
    await edge.caughtUp();
    await expect(
      httpsGet(edge.edge.ingressHttpsPort!, { servername: hostname, host: hostname, ca: root }),
    ).rejects.toThrow();
  });
});
