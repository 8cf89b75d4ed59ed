// A backup and a restore survive kill -9 of their server at every phase (SUBSTRATE.md "Durable
// operations"), as the reinstall does (test/services/kill-9.test.ts, whose harness this is): a real server
// parked in a phase by FAILPOINT_HOLD is killed with SIGKILL, and the next one finishes the operation; the
// volume holds the old data or the backup's, never a mix, and the snapshot is whole or absent.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { startJobServer, type ServerProcess } from '../support/job-server.js';
import { outcome } from '../support/refusal.js';
import { awaitOperation, provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import type { SubstrateDriver } from '../../server/src/substrate/driver.js';
import { createSubstrate } from '../../server/src/substrate/index.js';

// Both the API and the servers seal and open mail and secrets with it; their data directories differ.
const ENCRYPTION_KEY = randomBytes(32).toString('base64');
const dataDir = join(process.cwd(), '.tmp', `backups-kill-9-${randomUUID()}`);

let smtp: TestSmtp;
let app: TestApp;
let staff: Staff;
let site: Provisioned;
/** A VPS: its reinstall queues behind a backup. */
let vps: Provisioned;
/** The spawned servers' substrate, read from outside: what they did to volumes and units. */
let substrate: SubstrateDriver;
/** The server process running now, if any: one at a time, so none but the one meant takes the job. */
let server: ServerProcess | null = null;

const startServer = (env: Record<string, string> = {}): Promise<ServerProcess> =>
  startJobServer({
    databaseUrl: app.databaseUrl,
    dataDir,
    encryptionKey: ENCRYPTION_KEY,
    smtpUrl: smtp.url,
    env,
  });

/** Stops the running server, if any: gracefully, or with -9 when it will not finish (a held job). */
async function stopServer(): Promise<void> {
  const current = server;
  server = null;
  if (!current) return;
  const timer = setTimeout(() => void current.kill9(), 15_000);
  await current.stop();
  clearTimeout(timer);
}

beforeAll(async () => {
  await mkdir(dataDir, { recursive: true });
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { WORKER: 'off', SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', ENCRYPTION_KEY },
  });
  substrate = createSubstrate('local', { dataDir });
  // The API runs no jobs: sign-up mail and provisioning wait for a server.
  server = await startServer();
  staff = await staffMember(app, smtp, 'bk9-staff', ['manage_services']);
  const orgId = (
    await staff.plain.organizationCreate({
      body: { name: 'Crash', slug: `crash-${Date.now().toString(36)}` },
    })
  ).id;
  const projectId = (
    await staff.plain.projectCreate({ path: { id: orgId }, body: { name: 'Crash', slug: 'crash' } })
  ).id;
  site = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Crash site' });
  vps = await provisionService(staff.elevated, { projectId, osImage: 'debian-12', name: 'Crash box' });
  await stopServer();
}, 300_000);

afterAll(async () => {
  // Servers first: a live one would start the units again (reconcile_units).
  await stopServer();
  await substrate?.close({ stopUnits: true });
  await rm(dataDir, { recursive: true, force: true });
  await app?.close();
  await smtp?.close();
});

const volumeFile = (...rest: string[]) => join(dataDir, 'volumes', site.volumeResourceId, ...rest);
const at = () => ({ id: site.serviceInstanceId, resource_id: site.volumeResourceId });

/** Waits until the operation is recorded in `phase` and the server says it holds there. */
async function heldIn(operationId: string, kind: string, phase: string, of = site): Promise<void> {
  for (const deadline = Date.now() + 60_000; ;) {
    const op = await staff.plain.serviceOperationGet({
      path: { id: of.serviceInstanceId, operation_id: operationId },
    });
    if (op.status === 'running' && op.phase === phase) break;
    if (op.status !== 'queued' && op.status !== 'running')
      throw new Error(`the ${kind} ended ${op.status} before the hold`);
    if (Date.now() > deadline)
      throw new Error(`the ${kind} is ${op.status} in ${op.phase ?? '-'}, not held in ${phase}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await server!.waitFor(new RegExp(`"phase":"${phase}"[^\\n]*"msg":"FAILPOINT_HOLD`));
}

/** Kills the held server and lets a fresh one finish the operation; answers it. */
async function finishAfterKill(operationId: string, of = site) {
  await server!.kill9();
  server = await startServer();
  const op = await awaitOperation(staff.plain, of.serviceInstanceId, operationId, 90_000);
  await server.waitFor(/jobs of a job worker that died were unlocked/, 5_000);
  return op;
}

let ready: string;

/** The service's backup rows and operations: what a refusal must leave as they were. */
async function rowsOf(of: Provisioned) {
  return {
    backups: await app.sql`
      select id, status, restore_phase, deleted_at from service_backups
      where service_instance_id = ${of.serviceInstanceId} order by id`,
    ops: await app.sql`
      select id, kind, status from service_operations where service_instance_id = ${of.serviceInstanceId} order by id`,
  };
}

it('a backup killed -9 in its snapshot phase is made by the next server', { timeout: 240_000 }, async () => {
  await stopServer();
  await writeFile(volumeFile('page.html'), 'version 1');
  server = await startServer({ FAILPOINT_HOLD: 'backup:snapshot' });
  const accepted = await staff.plain.backupCreate({ path: at(), body: { name: 'crash' } });
  await heldIn(accepted.operation_id, 'backup', 'snapshot');
  expect(await readdir(join(dataDir, 'snapshots')).catch(() => [])).toEqual([]);
  // While it runs: a second backup is 409, and so is deleting this one; neither changes anything.
  const before = await rowsOf(site);
  expect(await outcome(staff.plain.backupCreate({ path: at(), body: { name: 'second' } }))).toEqual([
    409,
    'operation-in-progress',
  ]);
  expect(
    await outcome(staff.plain.backupDelete({ path: { ...at(), backup_id: accepted.backup.id } })),
  ).toEqual([409, 'operation-in-progress']);
  expect(await rowsOf(site)).toEqual(before);
  const op = await finishAfterKill(accepted.operation_id);
  expect(op).toMatchObject({ kind: 'backup', status: 'succeeded', progress_percent: 100 });
  const { backups } = await staff.plain.backupList({ path: at() });
  expect(backups).toEqual([expect.objectContaining({ id: accepted.backup.id, status: 'ready' })]);
  ready = accepted.backup.id;
  expect(await server!.stop()).toBe(0);
  server = null;
});

it.each([
  ['stopping', { unit: 'running', data: 'version 2' }],
  ['reverting', { unit: 'stopped', data: 'version 2' }],
  ['starting', { unit: 'stopped', data: 'version 1' }],
] as const)(
  'a restore killed -9 in phase %s is finished by the next server',
  { timeout: 240_000 },
  async (phase, held) => {
    await stopServer();
    server = await startServer();
    // The service runs, and its data moved on since the backup.
    await awaitOperation(
      staff.plain,
      site.serviceInstanceId,
      (
        await staff.plain.serviceInstancePower({
          path: { id: site.serviceInstanceId },
          body: { action: 'start' },
        })
      ).operation_id,
      90_000,
    );
    await writeFile(volumeFile('page.html'), 'version 2');
    await writeFile(volumeFile('later.txt'), 'after');
    await stopServer();

    server = await startServer({ FAILPOINT_HOLD: `restore:${phase}` });
    const accepted = await staff.plain.backupRestore({ path: { ...at(), backup_id: ready } });
    await heldIn(accepted.operation_id, 'restore', phase);
    expect((await substrate.unitStatus(site.primaryResourceId)).state).toBe(held.unit);
    expect(await readFile(volumeFile('page.html'), 'utf8')).toBe(held.data);
    const { backups } = await staff.plain.backupList({ path: at() });
    expect(backups[0]).toMatchObject({ status: 'restoring', restore_phase: phase });
    // While it runs: deleting the backup, restoring it again and a new backup are 409, changing nothing.
    const before = await rowsOf(site);
    const call = { path: { ...at(), backup_id: ready } };
    expect(await outcome(staff.plain.backupDelete(call))).toEqual([409, 'operation-in-progress']);
    expect(await outcome(staff.plain.backupRestore(call))).toEqual([409, 'operation-in-progress']);
    expect(await outcome(staff.plain.backupCreate({ path: at() }))).toEqual([409, 'operation-in-progress']);
    expect(await rowsOf(site)).toEqual(before);

    const op = await finishAfterKill(accepted.operation_id);
    expect(op).toMatchObject({
      kind: 'restore',
      status: 'succeeded',
      phase: 'starting',
      progress_percent: 100,
    });
    expect(await readFile(volumeFile('page.html'), 'utf8')).toBe('version 1');
    await expect(stat(volumeFile('later.txt'))).rejects.toThrow();
    expect((await readdir(join(dataDir, 'volumes'))).filter((n) => n.startsWith('.'))).toEqual([]);
    expect((await substrate.unitStatus(site.primaryResourceId)).state).toBe('running');
    expect((await staff.plain.backupList({ path: at() })).backups[0]).toMatchObject({
      status: 'ready',
      restore_phase: null,
    });
    expect(await server!.stop()).toBe(0);
    server = null;
  },
);

it(
  'a reinstall queues behind a backup (no 409) and runs once the backup is made',
  { timeout: 300_000 },
  async () => {
    await stopServer();
    server = await startServer({ FAILPOINT_HOLD: 'backup:snapshot' });
    const on = { id: vps.serviceInstanceId, resource_id: vps.volumeResourceId };
    const backup = await staff.plain.backupCreate({ path: on });
    await heldIn(backup.operation_id, 'backup', 'snapshot', vps);
    const reinstall = await staff.plain.vpsReinstall({
      path: { id: vps.serviceInstanceId, resource_id: vps.primaryResourceId },
      body: { os_image: 'debian-12', confirm: true },
    });
    const queued = await staff.plain.serviceOperationGet({
      path: { id: vps.serviceInstanceId, operation_id: reinstall.operation_id },
    });
    expect(queued).toMatchObject({ kind: 'reinstall', status: 'queued', phase: null });
    // A backup of the VPS meanwhile is still 409: only a reinstall waits.
    expect(await outcome(staff.plain.backupCreate({ path: on }))).toEqual([409, 'operation-in-progress']);

    const made = await finishAfterKill(backup.operation_id, vps);
    expect(made).toMatchObject({ kind: 'backup', status: 'succeeded' });
    const rebuilt = await awaitOperation(staff.plain, vps.serviceInstanceId, reinstall.operation_id, 120_000);
    expect(rebuilt).toMatchObject({ kind: 'reinstall', status: 'succeeded' });
    expect(new Date(rebuilt.created_at) < new Date(made.completed_at!)).toBe(true);
    expect((await staff.plain.backupList({ path: on })).backups).toEqual([
      expect.objectContaining({ id: backup.backup.id, status: 'ready' }),
    ]);
    expect(await server!.stop()).toBe(0);
    server = null;
  },
);
