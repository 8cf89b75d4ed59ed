// Issue 33 item 2: a backup onto a full disk fails at once, saying so, instead of being retried for half
// an hour (holding the service, a restore 409). The snapshots directory is a 1 MiB tmpfs; the volume
// holds more than that of incompressible bytes.
import { randomBytes } from 'node:crypto';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffMember } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { signedIn, type Caller } from '../support/organizations.js';
import { awaitOperation, provisionService, type Provisioned } from '../support/services.js';
import { mountSmallDisk, SMALL_DISK_UNAVAILABLE } from '../support/small-disk.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let owner: Caller;
let site: Provisioned;
let unmount: (() => void) | null = null;

describe.skipIf(SMALL_DISK_UNAVAILABLE !== null)(`a full disk (${SMALL_DISK_UNAVAILABLE ?? 'root'})`, () => {
  beforeAll(async () => {
    smtp = await startTestSmtp();
    app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
    const staff = await staffMember(app, smtp, 'bkf-staff', ['manage_services']);
    owner = await signedIn(app, smtp, 'bkf-owner');
    const orgId = (
      await owner.api.organizationCreate({ body: { name: 'Full', slug: `full-${Date.now().toString(36)}` } })
    ).id;
    const projectId = (
      await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Full', slug: 'full' } })
    ).id;
    site = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Shop' });
    unmount = mountSmallDisk(join(app.substrateDir, 'snapshots'));
  }, 180_000);
  afterAll(async () => {
    unmount?.();
    await app?.close();
    await smtp?.close();
  });

  it('fails a backup at once with an error saying the disk is full, leaving nothing behind', async () => {
    const at = { id: site.serviceInstanceId, resource_id: site.volumeResourceId };
    await writeFile(join(app.substrateDir, 'volumes', site.volumeResourceId, 'noise.bin'), randomBytes(3 << 20));
    const accepted = await owner.api.backupCreate({ path: at });
    // Retried, it would read `running` for half an hour; failed at once, it ends within seconds.
    const op = await awaitOperation(owner.api, site.serviceInstanceId, accepted.operation_id, 20_000);
    expect(op).toMatchObject({ kind: 'backup', status: 'failed' });
    expect(op.error).toMatch(/disk .* is full/);
    const listed = (await owner.api.backupList({ path: at })).backups.find((b) => b.id === accepted.backup.id);
    expect(listed).toMatchObject({ status: 'failed', size_bytes: null });
    const left = await readdir(join(app.substrateDir, 'snapshots', site.volumeResourceId)).catch(() => []);
    expect(left).toEqual([]);
    // The service is not held: another backup may be asked for at once.
    const next = await owner.api.backupCreate({ path: at });
    expect(next.backup.status).toBe('creating');
    await awaitOperation(owner.api, site.serviceInstanceId, next.operation_id, 20_000);
  });
});
