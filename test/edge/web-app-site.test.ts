// A web app serves what its volume holds (DECISIONS.md §8; issue 32 item 3), through the edge's ingress:
// a site uploaded by the files API under public/ with content types, ETag and Last-Modified, conditional
// GET, Range, 404s, and never a file outside public/ (a planted link included); then an app with
// /package.json's scripts.start run by `npm start` with PORT and NODE_ENV=production, started again
// after it crashes with the console saying why. Each is picked up at a power restart.
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webPlatformHost } from '../../server/src/dns/platform-names.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { randomPortPool, startTestEdge, type TestEdge } from '../support/edge.js';
import type { Caller } from '../support/organizations.js';
import { awaitOperation, provisionService, serviceCustomer, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { get, listening } from './http-client.js';

let app: TestApp;
let smtp: TestSmtp;
let edge: TestEdge;
let owner: Caller;
let web: Provisioned;
let host: string;
let address: string;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', PORT_POOL: randomPortPool(8) },
  });
  edge = await startTestEdge(app);
  const customer = await serviceCustomer(app, smtp, 'site');
  owner = customer.owner;
  web = await provisionService(customer.staff.elevated, {
    projectId: customer.projectId,
    productSlug: 'web-app',
    name: 'Site',
  });
  const [row] = await app.sql<{ slug: string; address: string }[]>`
    select s.slug, host(r.address) as address
    from service_instances s join service_resources r on r.service_instance_id = s.id
    where r.id = ${web.primaryResourceId}`;
  host = webPlatformHost(row!.slug, web.serviceInstanceId, app.config.platformDomain);
  address = row!.address;
  await listening(address, 8080);
  await edge.caughtUp();
}, 180_000);
afterAll(async () => {
  await edge?.stop();
  await app?.close();
  await smtp?.close();
});

const fetchPath = (path: string, headers: Record<string, string> = {}) =>
  get(edge.edge.ingressHttpPort!, host, path, headers);
const upload = (path: string, content: string) =>
  owner.api.fileWrite({
    path: { id: web.serviceInstanceId, resource_id: web.volumeResourceId },
    query: { path },
    body: { content },
  });
const volume = (...rest: string[]) => join(app.substrateDir, 'volumes', web.volumeResourceId, ...rest);

/** Restarts the service and waits until the ingress gets `want` from its new program at `/`. */
async function restart(want: RegExp) {
  const accepted = await owner.api.serviceInstancePower({
    path: { id: web.serviceInstanceId },
    body: { action: 'restart' },
  });
  const op = await awaitOperation(owner.api, web.serviceInstanceId, accepted.operation_id, 60_000);
  expect(op).toMatchObject({ kind: 'restart', status: 'succeeded' });
  await listening(address, 8080);
  await edge.caughtUp();
  // A moment of 502 while the confined program comes up behind its new network namespace.
  const deadline = Date.now() + 20_000;
  for (;;) {
    const body = (await fetchPath('/').catch(() => null))?.body ?? '';
    if (want.test(body)) return;
    if (Date.now() > deadline) throw new Error(`after the restart / still answers ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The unit's console so far (its scrollback), read for `ms`. */
async function consoleText(ms = 500): Promise<string> {
  const stream = await app.substrate!.openConsole(web.primaryResourceId);
  let text = '';
  stream!.on('data', (d: Buffer) => (text += d.toString()));
  await new Promise((resolve) => setTimeout(resolve, ms));
  stream!.destroy();
  return text;
}

const INDEX = '<!doctype html><title>Shop</title><h1>Welcome to the shop</h1>\n';

describe('a static site', () => {
  beforeAll(async () => {
    await upload('/public/index.html', INDEX);
    await upload('/public/css/site.css', 'h1 { color: teal }\n');
    await upload('/public/docs/guide.txt', 'A'.repeat(100));
    await upload('/public/.well-known/security.txt', 'Contact: mailto:security@example.com\n');
    await upload('/public/.git/config', '[core]\n');
    await upload('/secret.txt', 'the volume’s secret\n');
    // A link planted in public/ (as SFTP's symlink makes one) to a file of the volume outside it.
    await symlink('../secret.txt', volume('public', 'leak.txt'));
    await symlink('../../secret.txt', volume('public', 'docs', 'index.html'));
    await restart(/Welcome to the shop/);
  }, 90_000);

  it('serves index.html for / and files by their content type, with ETag and Last-Modified', async () => {
    const page = await fetchPath('/');
    expect(page).toMatchObject({ status: 200, body: INDEX });
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers.etag).toMatch(/^W\/".+"$/);
    expect(new Date(page.headers['last-modified']!).getTime()).toBeGreaterThan(0);
    const css = await fetchPath('/css/site.css');
    expect(css).toMatchObject({ status: 200, body: 'h1 { color: teal }\n' });
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect((await fetchPath('/.well-known/security.txt')).status).toBe(200);
    // A directory without its slash is sent to it.
    const dir = await fetchPath('/css');
    expect(dir.status).toBe(301);
    expect(dir.headers.location).toBe('/css/');
  });

  it('answers conditional GETs with 304 and a Range with 206', async () => {
    const page = await fetchPath('/');
    expect((await fetchPath('/', { 'if-none-match': page.headers.etag! })).status).toBe(304);
    expect((await fetchPath('/', { 'if-modified-since': page.headers['last-modified']! })).status).toBe(304);
    const part = await fetchPath('/docs/guide.txt', { range: 'bytes=10-19' });
    expect(part).toMatchObject({ status: 206, body: 'A'.repeat(10) });
    expect(part.headers['content-range']).toBe('bytes 10-19/100');
  });

  it('answers 404 for what is missing and for anything outside public/, links included', async () => {
    for (const path of [
      '/missing.html',
      '/leak.txt',
      '/docs/',
      '/../secret.txt',
      '/%2e%2e/secret.txt',
      '/.git/config',
    ]) {
      const answer = await fetchPath(path);
      expect([path, answer.status]).toEqual([path, 404]);
      expect(answer.body).not.toContain('secret');
    }
  });
});

describe('an npm start app', () => {
  beforeAll(async () => {
    await upload(
      '/package.json',
      JSON.stringify({ name: 'shop', private: true, scripts: { start: 'node server.js' } }),
    );
    await upload(
      '/server.js',
      [
        "const http = require('node:http');",
        // Each run its own: PIDs repeat in the unit's own PID namespace.
        "const run = require('node:crypto').randomUUID();",
        'http.createServer((req, res) => {',
        "  if (req.url === '/crash') { res.end('bye'); setTimeout(() => process.exit(3), 20); return; }",
        '  res.end(`app ${run} ${process.env.NODE_ENV} ${process.env.PORT}`);',
        '}).listen(process.env.PORT, process.env.HOST);',
      ].join('\n'),
    );
    await restart(/^app [0-9a-f-]{36} production 8080$/);
  }, 90_000);

  it('runs npm start with PORT and NODE_ENV=production, and starts it again after a crash', async () => {
    const first = await fetchPath('/');
    expect(first.body).toMatch(/^app [0-9a-f-]{36} production 8080$/);
    expect((await fetchPath('/crash')).body).toBe('bye');
    // Another run of the app answers (a second start, not the first one still up).
    const again = async () => (await fetchPath('/').catch(() => null))?.body ?? '';
    await expect
      .poll(
        async () => {
          const body = await again();
          return body !== first.body && /^app [0-9a-f-]{36} production 8080$/.test(body);
        },
        { timeout: 15_000, interval: 200 },
      )
      .toBe(true);
    expect(await consoleText()).toContain('The app exited with code 3; starting it again in 1 s');
  }, 60_000);
});
