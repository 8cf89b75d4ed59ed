// Issue 33 item 7: a write that meets a full disk is 507 `insufficient-storage` (problem+json) from the
// gateway and the API, and SFTP's FAILURE saying so; nothing partial stays. The volume's directory is a
// 1 MiB tmpfs (mounted over it after provisioning: the file layer opens it afresh on every call).
import { randomBytes } from 'node:crypto';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffMember } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { signedIn, type Caller } from '../support/organizations.js';
import { refusal } from '../support/refusal.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { mountSmallDisk, SMALL_DISK_UNAVAILABLE } from '../support/small-disk.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { call, signIn } from '../sftp/client.js';

let app: TestApp;
let smtp: TestSmtp;
let owner: Caller;
let web: Provisioned;
let volume: string;
let unmount: (() => void) | null = null;

const at = () => ({ id: web.serviceInstanceId, resource_id: web.volumeResourceId });
/** Everything in the volume but the filler: what a refused write must not leave. */
const leftOver = async () => (await readdir(volume)).filter((n) => n !== 'filler.bin').sort();

describe.skipIf(SMALL_DISK_UNAVAILABLE !== null)(`a full volume disk (${SMALL_DISK_UNAVAILABLE ?? 'root'})`, () => {
  beforeAll(async () => {
    smtp = await startTestSmtp();
    app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' }, gateway: true });
    const staff = await staffMember(app, smtp, 'fdk-staff', ['manage_services']);
    owner = await signedIn(app, smtp, 'fdk-owner');
    const orgId = (
      await owner.api.organizationCreate({ body: { name: 'Full', slug: `fdk-${Date.now().toString(36)}` } })
    ).id;
    const projectId = (
      await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Main', slug: 'main' } })
    ).id;
    web = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Site' });
    volume = join(app.substrateDir, 'volumes', web.volumeResourceId);
    unmount = mountSmallDisk(volume);
    // Most of the disk taken, as by the customer's own files.
    await writeFile(join(volume, 'filler.bin'), randomBytes(900 * 1024));
  }, 120_000);
  afterAll(async () => {
    unmount?.();
    await app?.close();
    await smtp?.close();
  });

  it('answers an upload through the gateway 507 problem+json and keeps nothing', async () => {
    const ticket = await owner.api.fileSessionTicketCreate({ path: at() });
    const put = await fetch(`${ticket.base_url}/files?path=/big.bin`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ticket.token}` },
      body: randomBytes(2 << 20),
    });
    expect(put.status).toBe(507);
    expect(put.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await put.json()).toMatchObject({
      status: 507,
      code: 'insufficient-storage',
      type: '/docs/errors#insufficient-storage',
    });
    expect(await leftOver()).toEqual([]);
  });

  it('answers a write through the API 507 insufficient-storage and keeps nothing', async () => {
    const err = await refusal(
      owner.api.fileWrite({ path: at(), query: { path: '/page.html' }, body: { content: 'x'.repeat(400 * 1024) } }),
    );
    expect([err.status, err.code]).toEqual([507, 'insufficient-storage']);
    expect(await leftOver()).toEqual([]);
  });

  it('answers an SFTP upload FAILURE saying the disk is full, and keeps no partial file', async () => {
    const { username, password, port } = await owner.api.sftpRotate({ path: { id: web.serviceInstanceId } });
    const session = await signIn(port!, username, password!);
    try {
      const failed = await call((cb) => session.sftp.writeFile('/big.bin', randomBytes(2 << 20), cb)).then(
        () => null,
        (err: { code?: number; message: string }) => err,
      );
      expect(failed?.code).toBe(4);
      expect(failed?.message).toMatch(/No space left on device/);
    } finally {
      session.end();
    }
    expect(await leftOver()).toEqual([]);
  });
});
