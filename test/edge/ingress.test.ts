// The edge's HTTP ingress against the real web-app workload: HTTP routed by Host, HTTPS by SNI with the
// platform's wildcard certificate checked by a client that trusts only the local CA, unknown names
// (404 over HTTP, no handshake over HTTPS), a Host that is not the SNI name (421), the ACME HTTP-01
// answer, and a unit that does not answer (502).
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localCaCertificatePem } from '../../server/src/certificates/local-ca.js';
import { webPlatformHost } from '../../server/src/dns/platform-names.js';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { randomPortPool, startTestEdge, type TestEdge } from '../support/edge.js';
import { signedIn, type Caller } from '../support/organizations.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { get, httpsGet, listening } from './http-client.js';

let app: TestApp;
let smtp: TestSmtp;
let edge: TestEdge;
let staff: Staff;
let owner: Caller;
let web: Provisioned;
let host: string;
let ca: string;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', PORT_POOL: randomPortPool(8) },
  });
  edge = await startTestEdge(app);
  staff = await staffMember(app, smtp, 'ingress-staff', ['manage_services']);
  owner = await signedIn(app, smtp, 'ingress-owner');
  const orgId = (
    await owner.api.organizationCreate({
      body: { name: 'Ingress', slug: `ingress-${Date.now().toString(36)}` },
    })
  ).id;
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Web', slug: 'web' } })
  ).id;
  web = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Site' });
  const [service] = await app.sql<
    { slug: string }[]
  >`select slug from service_instances where id = ${web.serviceInstanceId}`;
  host = webPlatformHost(service!.slug, web.serviceInstanceId, app.config.platformDomain);
  ca = await localCaCertificatePem(app.config);
  // Provisioning ends when the workload is started; its program listens a moment later.
  const [unit] = await app.sql<{ address: string }[]>`
    select host(address) as address from service_resources where id = ${web.primaryResourceId}`;
  await listening(unit!.address, 8080);
  await edge.caughtUp();
}, 180_000);
afterAll(async () => {
  await edge?.stop();
  await app?.close();
  await smtp?.close();
});

const httpPort = () => edge.edge.ingressHttpPort!;
const httpsPort = () => edge.edge.ingressHttpsPort!;

describe('HTTP', () => {
  it('reports its ports and routes a web service’s platform host to its program', async () => {
    const [row] =
      await app.sql`select ingress_http_port, ingress_https_port from edge_nodes where id = ${edge.edge.id}`;
    expect(row).toEqual({ ingress_http_port: httpPort(), ingress_https_port: httpsPort() });
    const answer = await get(httpPort(), host, '/');
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('The web app runs.\n');
    // The Host's port and letter case do not matter.
    expect((await get(httpPort(), `${host.toUpperCase()}:${httpPort()}`, '/x')).status).toBe(200);
  });

  it('answers 404 for a name it does not serve, and 400 without a Host', async () => {
    const unknown = await get(httpPort(), `nothing-00000000.apps.${app.config.platformDomain}`, '/');
    expect(unknown.status).toBe(404);
    expect(unknown.body).not.toContain('web app');
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(httpPort(), '127.0.0.1', () => socket.end('GET / HTTP/1.0\r\n\r\n'));
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400/);
  });

  it('answers an ACME HTTP-01 challenge for any name while it is open', async () => {
    const path = '/.well-known/acme-challenge/tok-123';
    expect((await get(httpPort(), 'shop.example.com', path)).status).toBe(404);
    await app.sql`insert into acme_challenges (token, hostname, key_authorization, created_at)
                  values ('tok-123', 'shop.example.com', 'tok-123.thumbprint', now())`;
    const answer = await get(httpPort(), 'shop.example.com', path);
    expect(answer).toMatchObject({ status: 200, body: 'tok-123.thumbprint' });
    await app.sql`delete from acme_challenges where token = 'tok-123'`;
    expect((await get(httpPort(), 'shop.example.com', path)).status).toBe(404);
  });
});

describe('HTTPS', () => {
  it('presents the platform wildcard, signed by the local CA, and routes by SNI and Host', async () => {
    const answer = await httpsGet(httpsPort(), { servername: host, host, ca });
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('The web app runs.\n');
    expect(answer.certificate?.subjectaltname).toBe(`DNS:*.apps.${app.config.platformDomain}`);
    const [stored] =
      await app.sql`select issuer from tls_certificates where hostname = ${`*.apps.${app.config.platformDomain}`}`;
    expect(stored).toEqual({ issuer: 'local' });
  });

  it('refuses the handshake for a name it holds no certificate for, and without SNI', async () => {
    await expect(
      httpsGet(httpsPort(), { servername: 'shop.example.com', host: 'shop.example.com', ca }),
    ).rejects.toThrow();
    await expect(httpsGet(httpsPort(), { servername: undefined, host, ca })).rejects.toThrow();
  });

  it('answers 421 when the Host is not the name the connection was made for', async () => {
    const other = `other-11111111.apps.${app.config.platformDomain}`;
    const answer = await httpsGet(httpsPort(), { servername: host, host: other, ca });
    expect(answer.status).toBe(421);
  });
});

describe('a unit that does not answer', () => {
  it('is a 502 that names no address', async () => {
    await app.substrate!.stopUnit(web.primaryResourceId);
    const answer = await get(httpPort(), host, '/');
    expect(answer.status).toBe(502);
    expect(answer.body).not.toMatch(/ECONNREFUSED|127\./);
  });
});
