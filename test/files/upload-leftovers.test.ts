// Issue 33 item 3: an upload's temporary file never outlives it. The gateway runs as its own process
// (server/src/gateway/main.ts, from its bundle); a SIGTERM mid-upload removes the file before it exits,
// a kill -9 leaves one that listings never show and the next gateway's start sweeps.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readdir } from 'node:fs/promises';
import { request, type ClientRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { staffMember } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { signedIn, type Caller } from '../support/organizations.js';
import { serverArgs } from '../support/program.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

const ENCRYPTION_KEY = randomBytes(32).toString('base64');
let app: TestApp;
let smtp: TestSmtp;
let owner: Caller;
let web: Provisioned;
let volume: string;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', ENCRYPTION_KEY } });
  // The gateway process checks tickets on real time.
  app.clock.set(new Date());
  const staff = await staffMember(app, smtp, 'ulo-staff', ['manage_services']);
  owner = await signedIn(app, smtp, 'ulo-owner');
  const orgId = (
    await owner.api.organizationCreate({ body: { name: 'Leftovers', slug: `ulo-${Date.now().toString(36)}` } })
  ).id;
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Main', slug: 'main' } })
  ).id;
  web = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Site' });
  volume = join(app.substrateDir, 'volumes', web.volumeResourceId);
}, 120_000);
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await app?.close();
  await smtp?.close();
});

/** A gateway process on this app's database and volumes; answers it and its HTTP port. */
async function startGateway(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, await serverArgs('server/src/gateway/main.ts'), {
    env: {
      ...process.env,
      DATABASE_URL: app.databaseUrl,
      DATA_DIR: app.substrateDir,
      ENCRYPTION_KEY,
      HOST: '127.0.0.1',
      GATEWAY_PORT: '0',
      SFTP_PORT: '0',
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the gateway did not start:\n${out}`)), 60_000);
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const port = /"port":(\d+)[^\n]*gateway listening/.exec(out)?.[1];
      if (port) {
        clearTimeout(timer);
        resolve(Number(port));
      }
    });
    child.once('exit', () => reject(new Error(`the gateway exited:\n${out}`)));
  });
  return { child, port };
}

const leftovers = async () => (await readdir(volume)).filter((n) => n.startsWith('.svc-upload-'));

/** Starts a 16 MiB upload to `/big.bin`, sends its first MiB and holds there until its file exists. */
async function holdAnUpload(port: number): Promise<ClientRequest> {
  const ticket = await owner.api.fileSessionTicketCreate({
    path: { id: web.serviceInstanceId, resource_id: web.volumeResourceId },
  });
  const req = request({
    host: '127.0.0.1',
    port,
    method: 'PUT',
    path: '/files?path=/big.bin',
    headers: { authorization: `Bearer ${ticket.token}`, 'content-length': String(16 << 20) },
  });
  req.on('error', () => undefined);
  req.write(randomBytes(1 << 20));
  const deadline = Date.now() + 10_000;
  while ((await leftovers()).length === 0) {
    if (Date.now() > deadline) throw new Error('the upload made no temporary file');
    await new Promise((r) => setTimeout(r, 20));
  }
  return req;
}

it('removes the temporary file of an upload cut by SIGTERM before the gateway exits', async () => {
  const { child, port } = await startGateway();
  const upload = await holdAnUpload(port);
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  // The client still holds its upload open: the drain must not wait for it.
  const [code] = (await Promise.race([
    exited,
    new Promise((_, reject) => setTimeout(() => reject(new Error('the gateway did not exit')), 10_000)),
  ])) as [number | null];
  upload.destroy();
  expect(code).toBe(0);
  expect(await leftovers()).toEqual([]);
}, 90_000);

it('never lists what a gateway killed with -9 left, and the next gateway sweeps it at start', async () => {
  const first = await startGateway();
  const upload = await holdAnUpload(first.port);
  const exited = once(first.child, 'exit');
  first.child.kill('SIGKILL');
  await exited;
  upload.destroy();
  expect(await leftovers()).toHaveLength(1);
  const listing = await owner.api.fileList({
    path: { id: web.serviceInstanceId, resource_id: web.volumeResourceId },
    query: { path: '/' },
  });
  expect(listing.entries.filter((e) => e.name.startsWith('.svc-'))).toEqual([]);

  const second = await startGateway();
  const deadline = Date.now() + 10_000;
  while ((await leftovers()).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(await leftovers()).toEqual([]);
  second.child.kill('SIGTERM');
  await once(second.child, 'exit');
}, 120_000);
