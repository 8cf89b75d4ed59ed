// Progress of a backup and of its restore, read through the operation poll as a client sees it (issue 18:
// "create and restore report progress_percent by bytes on the operation"): a volume large enough that
// each takes a while, polled with the SDK's waitForOperation; the values seen rise between the phases'
// first figure and 100, never fall, and include figures from the middle of the transfer.
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { components } from '@svcplatform/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import type { Caller } from '../support/organizations.js';
import { provisionService, serviceCustomer, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

type Operation = components['schemas']['Operation'];

let app: TestApp;
let smtp: TestSmtp;
let owner: Caller;
let site: Provisioned;

// 160 MiB of random bytes: zstd cannot shrink them, so a backup writes as much as it reads, and at this
// machine's ~300 MB/s each transfer takes about half a second, twice the 250 ms between progress writes.
const FILES = 16;
const FILE_BYTES = 10 * 1024 * 1024;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url } });
  const customer = await serviceCustomer(app, smtp, 'progress');
  owner = customer.owner;
  const { staff, projectId } = customer;
  site = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Big' });
  const dir = join(app.substrateDir, 'volumes', site.volumeResourceId, 'media');
  await mkdir(dir, { recursive: true });
  for (let i = 0; i < FILES; i++) await writeFile(join(dir, `clip-${i}.bin`), randomBytes(FILE_BYTES));
}, 180_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

/** Every figure the poll saw until the operation ended. */
async function progressOf(operationId: string): Promise<{ seen: number[]; last: Operation }> {
  const seen: number[] = [];
  const last = await owner.api.waitForOperation(site.serviceInstanceId, operationId, {
    intervalMs: 10,
    maxIntervalMs: 10,
    signal: AbortSignal.timeout(120_000),
    onProgress: (op) => {
      if (op.status === 'running' && op.progress_percent !== null) seen.push(op.progress_percent);
    },
  });
  return { seen, last };
}

const rising = (values: number[]) => values.every((v, i) => i === 0 || v >= values[i - 1]!);

it('reports a backup and its restore by bytes on the operation, rising to 100', async () => {
  const at = { id: site.serviceInstanceId, resource_id: site.volumeResourceId };
  const created = await owner.api.backupCreate({ path: at });
  const backup = await progressOf(created.operation_id);
  expect(backup.last).toMatchObject({ status: 'succeeded', progress_percent: 100 });
  expect(rising(backup.seen)).toBe(true);
  // Between the snapshot phase's first figure (1) and the end: the bytes moved so far.
  expect(backup.seen.filter((p) => p > 1 && p < 100).length, JSON.stringify(backup.seen)).toBeGreaterThan(0);

  const restored = await owner.api.backupRestore({ path: { ...at, backup_id: created.backup.id } });
  const restore = await progressOf(restored.operation_id);
  expect(restore.last).toMatchObject({ status: 'succeeded', progress_percent: 100 });
  expect(rising(restore.seen)).toBe(true);
  // The reverting phase moves from 10 to 90 as the archive is unpacked.
  expect(restore.seen.filter((p) => p > 10 && p < 90).length, JSON.stringify(restore.seen)).toBeGreaterThan(
    0,
  );
}, 240_000);
