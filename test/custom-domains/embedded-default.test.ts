// Custom domains on the embedded default (DECISIONS.md §8; issue 32 item 4): a name under a zone the
// platform serves (play.test) goes active with no DNS_SERVERS, its checks asking the platform's own DNS
// server, not the system's resolvers (which know no play.test): with the local CA, and with pebble as the
// README's recipe runs it (`-dnsserver` the platform's DNS, HTTP-01 on the ingress, CAA checked: the
// platform's zone up to its apex, the system's resolvers above it).
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localCaCertificatePem } from '../../server/src/certificates/local-ca.js';
import { httpsGet, listening } from '../edge/http-client.js';
import { freePort, startTestApp, type TestApp } from '../support/app.js';
import { randomPortPool, startTestEdge, type TestEdge } from '../support/edge.js';
import type { Caller } from '../support/organizations.js';
import { preparePebble, type TestPebble } from '../support/pebble.js';
import { startTestPlatformDns, type TestPlatformDns } from '../support/platform-dns.js';
import { provisionService, serviceCustomer, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

interface Setup {
  app: TestApp;
  smtp: TestSmtp;
  platformDns: TestPlatformDns;
  edge: TestEdge;
  owner: Caller;
  site: Provisioned;
}

/** An app on the defaults (no DNS_SERVERS), its platform DNS on DNS_PORT, an edge and a web app. */
async function setUp(tag: string, env: Record<string, string> = {}): Promise<Setup> {
  const smtp = await startTestSmtp();
  const dnsPort = await freePort();
  const app = await startTestApp({
    env: {
      SMTP_URL: smtp.url,
      SOURCE_RATE_LIMIT_SCALE: '1000',
      PORT_POOL: randomPortPool(8),
      DNS_PORT: String(dnsPort),
      DNS_TIMEOUT_MS: '2000',
      ...env,
    },
  });
  expect(app.config.dnsServers).toEqual([]);
  const platformDns = await startTestPlatformDns(app, dnsPort);
  const edge = await startTestEdge(app);
  const customer = await serviceCustomer(app, smtp, tag);
  const site = await provisionService(customer.staff.elevated, {
    projectId: customer.projectId,
    productSlug: 'web-app',
    name: 'Shop',
  });
  const [unit] = await app.sql<{ address: string }[]>`
    select host(address) as address from service_resources where id = ${site.primaryResourceId}`;
  await listening(unit!.address, 8080);
  return { app, smtp, platformDns, edge, owner: customer.owner, site };
}

async function tearDown(s: Partial<Setup>): Promise<void> {
  await s.edge?.stop();
  await s.platformDns?.stop();
  await s.app?.close();
  await s.smtp?.close();
}

/** Attaches `hostname` and runs the issuance job until the name leaves pending. */
async function attachedActive(s: Setup, hostname: string, timeoutMs = 60_000) {
  const made = await s.owner.api.customDomainAttach({
    path: { id: s.site.serviceInstanceId },
    body: { hostname },
  });
  await s.platformDns.caughtUp();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await s.app.worker!.runDue({ task: 'issue_certificate' });
    const { domains } = await s.owner.api.customDomainList({ path: { id: s.site.serviceInstanceId } });
    const row = domains.find((d) => d.id === made.id)!;
    if (row.status !== 'pending') return row;
    if (Date.now() > deadline) throw new Error(`still pending: ${row.status_reason ?? ''}`);
    // The app's worker may have tried the name before this DNS server had loaded it (CI saw "does not
    // resolve" once): that attempt's retry is due 30 s later by the app's clock, which only moves here.
    if (row.status_reason !== null) s.app.clock.advance(60_000);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function served(s: Setup, hostname: string, ca: string) {
  await s.edge.caughtUp();
  const answer = await httpsGet(s.edge.edge.ingressHttpsPort!, { servername: hostname, host: hostname, ca });
  expect(answer.status).toBe(200);
  return new X509Certificate(answer.certificate!.raw);
}

describe('with the local CA', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setUp('ed-local');
  }, 180_000);
  afterAll(() => tearDown(s ?? {}));

  it('makes shop.play.test active with a certificate from the local CA', async () => {
    const hostname = `shop-${Date.now().toString(36)}.play.test`;
    const row = await attachedActive(s, hostname);
    expect(row).toMatchObject({ status: 'active', status_reason: null });
    const [stored] = await s.app.sql<{ issuer: string }[]>`
      select issuer from tls_certificates where hostname = ${hostname}`;
    expect(stored!.issuer).toBe('local');
    const certificate = await served(s, hostname, await localCaCertificatePem(s.app.config));
    expect(certificate.checkHost(hostname)).toBe(hostname);
  }, 90_000);
});

describe('with pebble, as the README runs it', () => {
  let s: Setup;
  let pebble: TestPebble;
  beforeAll(async () => {
    pebble = await preparePebble();
    s = await setUp('ed-pebble', {
      ACME_DIRECTORY_URL: pebble.directoryUrl,
      ACME_CA_FILE: pebble.tlsCertificateFile,
      ACME_CAA_IDENTITIES: 'pebble.test',
    });
    await pebble.start({
      dnsServer: `127.0.0.1:${s.app.config.dnsPort}`,
      httpPort: s.edge.edge.ingressHttpPort!,
    });
  }, 180_000);
  afterAll(async () => {
    await pebble?.stop();
    await tearDown(s ?? {});
  });

  it('makes shop.play.test active with a pebble certificate, CAA read past the zone’s apex', async () => {
    const hostname = `shop-${Date.now().toString(36)}.play.test`;
    const row = await attachedActive(s, hostname);
    expect(row).toMatchObject({ status: 'active', status_reason: null });
    const [stored] = await s.app.sql<{ issuer: string }[]>`
      select issuer from tls_certificates where hostname = ${hostname}`;
    expect(stored!.issuer).toBe('acme');
    const certificate = await served(s, hostname, await pebble.root());
    expect(certificate.checkHost(hostname)).toBe(hostname);
  }, 90_000);
});
