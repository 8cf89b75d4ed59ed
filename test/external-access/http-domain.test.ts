// An allocation's HTTP domain (document 2 §4 "External access"; DECISIONS.md §4, §6 "DNS and domains"):
// configured and removed through the API, served by the edge's real ingress to a real program on the
// unit's address (Host routing, X-Forwarded-*, a streamed large body, a WebSocket, HTTPS by SNI), every
// refusal reading back that nothing changed, two services racing for one name, the release of the
// allocation tearing its domain down, and a platform whose ingress is off.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { unitNetnsPath } from '../../server/src/substrate/local/sandbox/names.js';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { issueLocalCertificate, localCaCertificatePem } from '../../server/src/certificates/local-ca.js';
import { putCertificate } from '../../server/src/certificates/store.js';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { randomPortPool, startTestEdge, type TestEdge } from '../support/edge.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { outcome, refusal } from '../support/refusal.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { get, httpsGet } from '../edge/http-client.js';

let app: TestApp;
let smtp: TestSmtp;
let edge: TestEdge;
let staff: Staff;
let owner: Caller;
let rival: Caller;
let stranger: Caller;
let orgId: string;
let rivalOrgId: string;
let main: Provisioned;
let sibling: Provisioned;
let foreign: Provisioned;
const UNIT_HTTP_SERVER = fileURLToPath(new URL('../support/unit-http-server.mjs', import.meta.url));
let unitServer: ChildProcess;
let unitPort: number;
let allocationId: string;
const tag = Date.now().toString(36);
const name = (label: string) => `${label}-${tag}.play.test`;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', PORT_POOL: randomPortPool(24) },
  });
  edge = await startTestEdge(app);
  staff = await staffMember(app, smtp, 'hd-staff', ['manage_services']);
  [owner, rival, stranger] = await Promise.all([
    signedIn(app, smtp, 'hd-owner'),
    signedIn(app, smtp, 'hd-rival'),
    signedIn(app, smtp, 'hd-stranger'),
  ]);
  orgId = (await owner.api.organizationCreate({ body: { name: 'Hd', slug: `hd-${tag}` } })).id;
  rivalOrgId = (await rival.api.organizationCreate({ body: { name: 'Rival', slug: `hd-rival-${tag}` } })).id;
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Proj', slug: 'proj' } })
  ).id;
  const rivalProject = (
    await rival.api.projectCreate({ path: { id: rivalOrgId }, body: { name: 'Rproj', slug: 'rproj' } })
  ).id;
  [main, sibling, foreign] = await Promise.all([
    provisionService(staff.elevated, { projectId, productSlug: 'vps-small', name: 'Main' }),
    provisionService(staff.elevated, { projectId, productSlug: 'vps-small', name: 'Sibling' }),
    provisionService(staff.elevated, { projectId: rivalProject, productSlug: 'vps-small', name: 'Foreign' }),
  ]);

  // A program of the unit's own, in its network namespace: an HTTP server on the unit's address that
  // tells what it was sent, echoes a POST's body as it streams in, and answers WebSockets.
  const [unit] = await app.sql<{ address: string }[]>`
    select host(address) as address from service_resources where id = ${main.primaryResourceId}`;
  unitServer = spawn(
    'nsenter',
    [`--net=${unitNetnsPath(main.primaryResourceId)}`, process.execPath, UNIT_HTTP_SERVER, unit!.address],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [line] = (await once(createInterface({ input: unitServer.stdout! }), 'line')) as [string];
  unitPort = Number(line);
  allocationId = (
    await owner.api.externalAccessAllocationCreate({
      path: { id: main.serviceInstanceId },
      body: { protocol: 'tcp', internal_port: unitPort },
    })
  ).id;
}, 240_000);
afterAll(async () => {
  unitServer?.kill('SIGKILL');
  await edge?.stop();
  await app?.close();
  await smtp?.close();
});

const setDomain = (c: Caller, p: Provisioned, allocation: string, domain: string) =>
  c.api.externalAccessAllocationHttpDomainSet({
    path: { id: p.serviceInstanceId, allocation_id: allocation },
    body: { domain },
  });
const removeDomain = (c: Caller, p: Provisioned, allocation: string) =>
  c.api.externalAccessAllocationHttpDomainDelete({
    path: { id: p.serviceInstanceId, allocation_id: allocation },
  });
const names = () =>
  app.sql`select hostname, service_instance_id, allocation_id, status from http_names order by hostname`;
const newAllocation = async (c: Caller, p: Provisioned, protocol: 'tcp' | 'udp' = 'tcp') =>
  (
    await c.api.externalAccessAllocationCreate({
      path: { id: p.serviceInstanceId },
      body: { protocol, match_port: true },
    })
  ).id;

describe('configure and serve', () => {
  it('claims the name, answers pending with its URL, and the ingress serves it to the unit', async () => {
    const domain = name('shop');
    const set = await setDomain(owner, main, allocationId, `  ${domain.toUpperCase()}. `);
    expect(set).toEqual({
      domain,
      status: 'pending',
      status_reason: null,
      url: `http://${domain}:${edge.edge.ingressHttpPort}`,
    });
    expect(
      (await auditEntries(app, orgId)).filter((e) => e.action === 'external_access.http_domain_set'),
    ).toHaveLength(1);
    // The same name again changes nothing and is not audited again.
    expect(await setDomain(owner, main, allocationId, domain)).toEqual(set);
    expect(
      (await auditEntries(app, orgId)).filter((e) => e.action === 'external_access.http_domain_set'),
    ).toHaveLength(1);
    const listing = await owner.api.externalAccessGet({ path: { id: main.serviceInstanceId } });
    expect(listing.http_ingress_ips).toEqual([app.config.host]);

    await edge.caughtUp();
    const answer = await get(edge.edge.ingressHttpPort!, domain, '/hello?x=1', {
      'x-forwarded-for': '203.0.113.9',
      connection: 'x-secret',
      'x-secret': 'hop',
    });
    expect(answer.status).toBe(200);
    const seen = JSON.parse(answer.body) as { url: string; headers: Record<string, string> };
    expect(seen.url).toBe('/hello?x=1');
    expect(seen.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(seen.headers['x-forwarded-proto']).toBe('http');
    expect(seen.headers['x-forwarded-host']).toBe(domain);
    expect(seen.headers['x-secret']).toBeUndefined();
    // The unit's hop-by-hop headers stay between it and the edge.
    expect(answer.headers['keep-alive']).not.toBe('timeout=77');
  });

  it('streams a large body both ways', async () => {
    const domain = name('shop');
    const size = 24 * 1024 * 1024;
    const chunk = randomBytes(64 * 1024);
    const sent = createHash('sha256');
    const received = createHash('sha256');
    let receivedBytes = 0;
    let firstByteBeforeEnd = false;
    let finishedSending = false;
    await new Promise<void>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: edge.edge.ingressHttpPort!,
          method: 'POST',
          path: '/up',
          headers: { host: domain },
          agent: false,
        },
        (res) => {
          expect(res.headers['x-seen-length']).toBe('chunked');
          res.on('data', (c: Buffer) => {
            if (!finishedSending) firstByteBeforeEnd = true;
            receivedBytes += c.length;
            received.update(c);
          });
          res.on('end', resolve);
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      let written = 0;
      const pump = () => {
        while (written < size) {
          written += chunk.length;
          sent.update(chunk);
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        finishedSending = true;
        req.end();
      };
      pump();
    });
    expect(receivedBytes).toBe(size);
    expect(received.digest('hex')).toBe(sent.digest('hex'));
    // The echo came back while the upload was still going: neither direction was buffered whole.
    expect(firstByteBeforeEnd).toBe(true);
  });

  it('passes a WebSocket upgrade through', async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${edge.edge.ingressHttpPort}/ws`, {
      headers: { host: name('shop') },
    });
    await once(socket, 'open');
    socket.send('ping');
    const [reply] = (await once(socket, 'message')) as [Buffer];
    expect(reply.toString()).toBe('echo:ping');
    socket.close();
  });

  it('serves HTTPS for the name once a certificate for it is stored', async () => {
    const domain = name('shop');
    const ca = await localCaCertificatePem(app.config);
    await expect(
      httpsGet(edge.edge.ingressHttpsPort!, { servername: domain, host: domain, ca }),
    ).rejects.toThrow();
    const issued = await issueLocalCertificate(app.config, [domain]);
    await putCertificate(app.sql, app.box, { hostname: domain, issuer: 'local', ...issued });
    await edge.caughtUp();
    const answer = await httpsGet(edge.edge.ingressHttpsPort!, {
      servername: domain,
      host: domain,
      ca,
      path: '/s',
    });
    expect(answer.status).toBe(200);
    expect(
      (JSON.parse(answer.body) as { headers: Record<string, string> }).headers['x-forwarded-proto'],
    ).toBe('https');
  });
});

describe('refusals', () => {
  it('refuses what it must, each leaving the names as they were', async () => {
    const before = await names();
    const udp = await newAllocation(owner, main, 'udp');
    const other = await newAllocation(owner, main);
    const cases: [() => Promise<unknown>, [number, string]][] = [
      [() => setDomain(stranger, main, allocationId, name('x')), [404, 'not-found']],
      [() => setDomain(rival, main, allocationId, name('x')), [404, 'not-found']],
      [() => setDomain(owner, sibling, allocationId, name('x')), [404, 'not-found']],
      [() => setDomain(owner, main, '00000000-0000-4000-8000-000000000000', name('x')), [404, 'not-found']],
      [() => setDomain(owner, main, allocationId, 'not a name'), [400, 'invalid-field-value']],
      [() => setDomain(owner, main, allocationId, '127.0.0.1'), [400, 'invalid-field-value']],
      [
        () => setDomain(owner, main, allocationId, `x.${app.config.platformDomain}`),
        [422, 'http-name-refused'],
      ],
      [() => setDomain(owner, main, allocationId, `a.b-${tag}.play.test`), [422, 'http-name-refused']],
      [() => setDomain(owner, main, allocationId, 'play.test'), [422, 'http-name-refused']],
      [() => setDomain(owner, main, allocationId, `unproven-${tag}.example.com`), [422, 'http-name-refused']],
      [() => setDomain(owner, main, udp, name('udp')), [422, 'http-domain-needs-tcp']],
      // This service's own name on another allocation is in use.
      [() => setDomain(owner, main, other, name('shop')), [422, 'http-name-refused']],
      [() => removeDomain(stranger, main, allocationId), [404, 'not-found']],
    ];
    for (const [call, expected] of cases) expect(await outcome(call())).toEqual(expected);
    const zone = await refusal(setDomain(owner, main, allocationId, `x.${app.config.platformDomain}`));
    expect(zone.details).toBe('platform_zone');
    const unproven = await refusal(setDomain(owner, main, allocationId, `unproven-${tag}.example.com`));
    expect(unproven.details).toBe('not_verified');
    const siblingAllocation = await newAllocation(owner, sibling);
    const taken = await refusal(setDomain(owner, sibling, siblingAllocation, name('shop')));
    expect([taken.status, taken.code, taken.details]).toEqual([422, 'http-name-refused', 'taken']);
    const foreignAllocation = await newAllocation(rival, foreign);
    const held = await refusal(setDomain(rival, foreign, foreignAllocation, name('shop')));
    // Another organization's name answers as an unproven one.
    expect([held.status, held.code, held.details]).toEqual([422, 'http-name-refused', 'not_verified']);
    expect(await names()).toEqual(before);
  });

  it('lets one of two services racing for a name have it', async () => {
    const [a, b] = await Promise.all([newAllocation(owner, sibling), newAllocation(rival, foreign)]);
    const domain = name('race');
    const results = await Promise.all([
      outcome(setDomain(owner, sibling, a, domain)),
      outcome(setDomain(rival, foreign, b, domain)),
    ]);
    expect(results.filter((r) => r === 'ok')).toHaveLength(1);
    expect(results.filter((r) => r !== 'ok')).toEqual([[422, 'http-name-refused']]);
    expect(await app.sql`select count(*)::int as n from http_names where hostname = ${domain}`).toEqual([
      { n: 1 },
    ]);
  });
});

describe('replace, remove, release', () => {
  it('replacing the name releases the old one, with its certificate, in the same change', async () => {
    const old = name('shop');
    const next = name('store');
    const set = await setDomain(owner, main, allocationId, next);
    expect(set.domain).toBe(next);
    expect(await app.sql`select hostname from http_names where allocation_id = ${allocationId}`).toEqual([
      { hostname: next },
    ]);
    expect(await app.sql`select 1 from tls_certificates where hostname = ${old}`).toHaveLength(0);
    await edge.caughtUp();
    expect((await get(edge.edge.ingressHttpPort!, old, '/')).status).toBe(404);
    expect((await get(edge.edge.ingressHttpPort!, next, '/')).status).toBe(200);
    // The old name is free: another organization's service may take it (a parent domain's label).
    const foreignAllocation = await newAllocation(rival, foreign);
    expect((await setDomain(rival, foreign, foreignAllocation, old)).domain).toBe(old);
  });

  it('removal is idempotent and releases the name', async () => {
    const allocation = await newAllocation(owner, sibling);
    const domain = name('gone');
    await setDomain(owner, sibling, allocation, domain);
    await removeDomain(owner, sibling, allocation);
    expect(await app.sql`select 1 from http_names where hostname = ${domain}`).toHaveLength(0);
    const audited = (await auditEntries(app, orgId)).filter(
      (e) => e.action === 'external_access.http_domain_removed',
    );
    await removeDomain(owner, sibling, allocation);
    expect(
      (await auditEntries(app, orgId)).filter((e) => e.action === 'external_access.http_domain_removed'),
    ).toHaveLength(audited.length);
  });

  it('releasing the allocation tears its HTTP domain down first', async () => {
    const domain = name('store');
    await owner.api.externalAccessAllocationDelete({
      path: { id: main.serviceInstanceId, allocation_id: allocationId },
    });
    expect(await app.sql`select 1 from http_names where hostname = ${domain}`).toHaveLength(0);
    const actions = (await auditEntries(app, orgId)).map((e) => e.action);
    expect(actions.slice(-2)).toEqual([
      'external_access.http_domain_removed',
      'external_access.allocation_released',
    ]);
    await edge.caughtUp();
    expect((await get(edge.edge.ingressHttpPort!, domain, '/')).status).toBe(404);
  });
});

describe('a platform without an HTTP ingress', () => {
  it('lists no ingress address and refuses an HTTP domain', async () => {
    const off = await startTestApp({
      databaseUrl: app.databaseUrl,
      env: {
        INGRESS_HTTP_PORT: 'off',
        INGRESS_HTTPS_PORT: 'off',
        WORKER: 'off',
        SOURCE_RATE_LIMIT_SCALE: '1000',
      },
    });
    try {
      const [{ id: allocation }] = await app.sql<[{ id: string }]>`
        select id from port_allocations where service_instance_id = ${sibling.serviceInstanceId} and protocol = 'tcp' limit 1`;
      const before = await names();
      const res = await fetch(
        `${off.baseUrl}/api/v2/service-instances/${sibling.serviceInstanceId}/external-access/allocations/${allocation}/http-domain`,
        {
          method: 'PUT',
          headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ domain: name('off') }),
        },
      );
      expect(res.status).toBe(422);
      expect(((await res.json()) as { code: string }).code).toBe('no-http-ingress');
      expect(await names()).toEqual(before);
      const listing = await fetch(
        `${off.baseUrl}/api/v2/service-instances/${sibling.serviceInstanceId}/external-access`,
        {
          headers: { authorization: `Bearer ${owner.token}` },
        },
      );
      expect(((await listing.json()) as { http_ingress_ips: string[] }).http_ingress_ips).toEqual([]);
    } finally {
      await off.close();
    }
  });
});
