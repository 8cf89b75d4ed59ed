// Downloads and file sessions through the edge gateway (DECISIONS.md §6 "The edge gateway"): the API
// mints the tickets, the gateway alone carries the bytes, through the confined file layer. A real
// gateway on loopback, real HTTP clients, a real volume directory with a canary beside it.
import { randomBytes, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { SECRET } from './canary.js';

let app: TestApp;
let smtp: TestSmtp;
let owner: Caller;
let member: Caller;
let orgId: string;
let web: Provisioned;
let staff: Staff;
let volume: string;
let outside: string;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' }, gateway: true });
  staff = await staffMember(app, smtp, 'xfr-staff', ['manage_services']);
  [owner, member] = await Promise.all([signedIn(app, smtp, 'xfr-owner'), signedIn(app, smtp, 'xfr-member')]);
  orgId = (
    await owner.api.organizationCreate({ body: { name: 'Transfers', slug: `xfr-${Date.now().toString(36)}` } })
  ).id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: member.userId, role: 'member' } });
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Main', slug: 'main' } })
  ).id;
  web = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Site' });
  volume = join(app.substrateDir, 'volumes', web.volumeResourceId);
  outside = join(app.substrateDir, `outside-${randomUUID()}`);
  await mkdir(outside, { recursive: true });
  await writeFile(join(outside, 'secret.txt'), SECRET);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

const at = () => ({ id: web.serviceInstanceId, resource_id: web.volumeResourceId });

async function canaryIntact(): Promise<void> {
  expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe(SECRET);
  expect(await readdir(outside)).toEqual(['secret.txt']);
}

/** Temporary upload files left in a directory of the volume. */
async function leftovers(dir = volume): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.startsWith('.svc-upload-'));
}

describe('downloads', () => {
  it('streams the file named in the ticket, of any size, once; audited before the answer', async () => {
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    await writeFile(join(volume, 'world.bin'), bytes);
    const ticket = await member.api.fileDownloadTicketCreate({ path: at(), body: { path: '//world.bin' } });
    expect(ticket.base_url).toBe(app.config.gatewayPublicUrl);
    expect(new Date(ticket.expires_at).getTime() - app.clock.now().getTime()).toBe(300_000);
    const audit = await auditEntries(app, orgId);
    expect(audit.at(-1)).toMatchObject({ action: 'file.download_ticket_issued', target_id: web.volumeResourceId });
    const url = `${ticket.base_url}/download?token=${ticket.token}`;
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toBe('attachment; filename=world.bin');
    expect(response.headers.get('content-length')).toBe(String(bytes.length));
    expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
    // Single use.
    expect((await fetch(url)).status).toBe(401);
    await rm(join(volume, 'world.bin'));
  });

  it('refuses a token altered, of another purpose, expired, or whose file became a link', async () => {
    await writeFile(join(volume, 'a.txt'), 'a');
    const ticket = await owner.api.fileDownloadTicketCreate({ path: at(), body: { path: '/a.txt' } });
    // The path is signed: a payload naming another file fails the signature.
    const [header, payload, signature] = ticket.token.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, pth: '/b.txt' })).toString('base64url');
    expect((await fetch(`${ticket.base_url}/download?token=${header}.${forged}.${signature}`)).status).toBe(401);
    // A download ticket is no file session.
    const asSession = await fetch(`${ticket.base_url}/files?path=/a.txt`, {
      headers: { authorization: `Bearer ${ticket.token}` },
    });
    expect(asSession.status).toBe(401);
    // Expired.
    app.clock.advance(301_000);
    try {
      expect((await fetch(`${ticket.base_url}/download?token=${ticket.token}`)).status).toBe(401);
    } finally {
      app.clock.advance(-301_000);
    }
    const rows = await app.sql`select redeemed_at from gateway_tickets where purpose = 'download' and redeemed_at is null`;
    expect(rows.length).toBeGreaterThan(0);
    // The file swapped for a link out of the volume after the ticket: never followed.
    const swapped = await owner.api.fileDownloadTicketCreate({ path: at(), body: { path: '/a.txt' } });
    await rm(join(volume, 'a.txt'));
    await symlink(join(outside, 'secret.txt'), join(volume, 'a.txt'));
    const response = await fetch(`${swapped.base_url}/download?token=${swapped.token}`);
    expect(response.status).toBe(404);
    expect(await response.text()).not.toContain(SECRET);
    await canaryIntact();
    await rm(join(volume, 'a.txt'));
  });
});

/** The answer's problem details, checked to be sent as application/problem+json. */
async function problemOf(response: Response): Promise<Record<string, unknown>> {
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  return (await response.json()) as Record<string, unknown>;
}

describe('file sessions', () => {
  it('uploads and downloads any number of files for 15 minutes, replacing atomically', async () => {
    const ticket = await owner.api.fileSessionTicketCreate({ path: at() });
    expect(new Date(ticket.expires_at).getTime() - app.clock.now().getTime()).toBe(900_000);
    expect((await auditEntries(app, orgId)).at(-1)?.action).toBe('file.session_ticket_issued');
    const auth = { authorization: `Bearer ${ticket.token}` };
    await mkdir(join(volume, 'up'));
    await writeFile(join(volume, 'up', 'big.bin'), 'old', { mode: 0o640 });
    const bytes = randomBytes(5 * 1024 * 1024 + 3);
    const put = await fetch(`${ticket.base_url}/files?path=/up//big.bin`, { method: 'PUT', headers: auth, body: bytes });
    expect(put.status).toBe(201);
    expect(await put.json()).toMatchObject({ kind: 'file', path: '/up/big.bin', size_bytes: bytes.length });
    expect((await readFile(join(volume, 'up', 'big.bin'))).equals(bytes)).toBe(true);
    const got = await fetch(`${ticket.base_url}/files?path=/up/big.bin`, { headers: auth });
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
    // Again, and a second file: the session is not spent by use.
    const small = await fetch(`${ticket.base_url}/files?path=/up/small.txt`, { method: 'PUT', headers: auth, body: 'hi' });
    expect(small.status).toBe(201);
    expect(await readFile(join(volume, 'up', 'small.txt'), 'utf8')).toBe('hi');
    expect(await leftovers(join(volume, 'up'))).toEqual([]);
    // Paths follow the file layer's rules.
    for (const bad of ['/up/../x', '/proc/self/environ', 'relative', '/a\0b']) {
      const r = await fetch(`${ticket.base_url}/files?path=${encodeURIComponent(bad)}`, { headers: auth });
      expect(await problemOf(r)).toMatchObject({ status: 400, code: 'invalid-path' });
    }
    expect((await fetch(`${ticket.base_url}/files?path=/missing/x`, { method: 'PUT', headers: auth, body: 'x' })).status).toBe(404);
    // Without the token, with another scheme, or once the 15 minutes are over: 401.
    expect((await fetch(`${ticket.base_url}/files?path=/up/small.txt`)).status).toBe(401);
    app.clock.advance(900_001);
    try {
      expect((await fetch(`${ticket.base_url}/files?path=/up/small.txt`, { headers: auth })).status).toBe(401);
    } finally {
      app.clock.advance(-900_001);
    }
    await rm(join(volume, 'up'), { recursive: true });
  });

  it("answers in the API's error format, with the API's statuses (DECISIONS.md §2, §8)", async () => {
    const ticket = await owner.api.fileSessionTicketCreate({ path: at() });
    const auth = { authorization: `Bearer ${ticket.token}` };
    await mkdir(join(volume, 'adir'));
    const cases: [Promise<Response>, number, string][] = [
      [fetch(`${ticket.base_url}/files?path=/adir`, { headers: auth }), 422, 'is-a-directory'],
      [fetch(`${ticket.base_url}/files?path=/nope.txt`, { headers: auth }), 404, 'not-found'],
      [fetch(`${ticket.base_url}/files`, { headers: auth }), 400, 'invalid-request'],
      [fetch(`${ticket.base_url}/files?path=/x`), 401, 'unauthenticated'],
      [fetch(`${ticket.base_url}/files?path=/x`, { method: 'DELETE', headers: auth }), 405, 'method-not-allowed'],
      [fetch(`${ticket.base_url}/download?token=nope`), 401, 'unauthenticated'],
      [fetch(`${ticket.base_url}/elsewhere`), 404, 'not-found'],
    ];
    for (const [request, status, code] of cases) {
      const response = await request;
      expect(await problemOf(response), `${status} ${code}`).toEqual({
        type: `/docs/errors#${code}`,
        title: expect.any(String),
        status,
        detail: expect.any(String),
        code,
        request_id: response.headers.get('x-request-id'),
        ...(code === 'invalid-request'
          ? { errors: [{ location: 'query', pointer: 'path', message: 'is required' }] }
          : {}),
      });
    }
    await rm(join(volume, 'adir'), { recursive: true });
  });

  it('replaces a link with the upload, never writing through it', async () => {
    const ticket = await owner.api.fileSessionTicketCreate({ path: at() });
    const auth = { authorization: `Bearer ${ticket.token}` };
    await symlink(join(outside, 'secret.txt'), join(volume, 'ln.txt'));
    await symlink(outside, join(volume, 'lndir'));
    expect((await fetch(`${ticket.base_url}/files?path=/ln.txt`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${ticket.base_url}/files?path=/lndir/secret.txt`, { headers: auth })).status).toBe(404);
    const into = await fetch(`${ticket.base_url}/files?path=/lndir/new.txt`, { method: 'PUT', headers: auth, body: 'x' });
    expect(into.status).toBe(404);
    const over = await fetch(`${ticket.base_url}/files?path=/ln.txt`, { method: 'PUT', headers: auth, body: 'mine' });
    expect(over.status).toBe(201);
    expect(await readFile(join(volume, 'ln.txt'), 'utf8')).toBe('mine');
    await canaryIntact();
    await rm(join(volume, 'ln.txt'));
    await rm(join(volume, 'lndir'));
  });

  it('refuses an upload past the volume size (413) and keeps nothing of one cut short', async () => {
    const ticket = await owner.api.fileSessionTicketCreate({ path: at() });
    await writeFile(join(volume, 'kept.txt'), 'kept');
    const url = new URL(`${ticket.base_url}/files?path=/kept.txt`);
    // Declared larger than the volume (the web app's is 10 GiB): refused before a byte is stored.
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(url, {
        method: 'PUT',
        headers: { authorization: `Bearer ${ticket.token}`, 'content-length': String(1024 ** 4) },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write(Buffer.alloc(1024));
    });
    expect(status).toBe(413);
    expect(await readFile(join(volume, 'kept.txt'), 'utf8')).toBe('kept');
    // A client that goes away halfway: the old file stays and the temporary file goes.
    await new Promise<void>((resolve) => {
      const req = request(url, {
        method: 'PUT',
        headers: { authorization: `Bearer ${ticket.token}`, 'content-length': String(4 * 1024 * 1024) },
      });
      req.on('error', () => resolve());
      req.write(Buffer.alloc(1024 * 1024), () => setImmediate(() => req.destroy()));
      req.on('close', () => resolve());
    });
    const deadline = Date.now() + 10_000;
    while ((await leftovers()).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await leftovers()).toEqual([]);
    expect(await readFile(join(volume, 'kept.txt'), 'utf8')).toBe('kept');
    await rm(join(volume, 'kept.txt'));
  });

  it('stops answering a caller whose access ended', async () => {
    const ticket = await member.api.fileSessionTicketCreate({ path: at() });
    const auth = { authorization: `Bearer ${ticket.token}` };
    await writeFile(join(volume, 'm.txt'), 'm');
    expect((await fetch(`${ticket.base_url}/files?path=/m.txt`, { headers: auth })).status).toBe(200);
    await owner.api.memberUpdate({ path: { id: orgId, user_id: member.userId }, body: { role: 'billing' } });
    try {
      expect((await fetch(`${ticket.base_url}/files?path=/m.txt`, { headers: auth })).status).toBe(401);
      const put = await fetch(`${ticket.base_url}/files?path=/m.txt`, { method: 'PUT', headers: auth, body: 'x' });
      expect(put.status).toBe(401);
      expect(await readFile(join(volume, 'm.txt'), 'utf8')).toBe('m');
    } finally {
      await owner.api.memberUpdate({ path: { id: orgId, user_id: member.userId }, body: { role: 'member' } });
    }
    await rm(join(volume, 'm.txt'));
  });
});
