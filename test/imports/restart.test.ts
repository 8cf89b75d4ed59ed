// A failed or cancelled import is not resumed after a restart (DECISIONS.md §8 "Imports against hostile
// servers"; issue 37: "after a restart the import resumes and does it again"). A real server runs the
// import against a hostile peer (test/support/hostile-sftp.ts) and is killed with SIGKILL in each phase:
// preparing (held there by FAILPOINT_HOLD), listing (the remote silent mid-listing) and transfer (the
// remote silent mid-file). The import is cancelled while no server runs, or (listing, transfer) found
// decided `failed` as a run killed just after deciding leaves it; the next server ends it so without connecting
// to the remote again, and no temporary file of an import stays in the volume (a killed run's and an
// earlier one's are swept: issue 33 item 4).
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { startHostileSftp, type HostileMode, type HostileSftp } from '../support/hostile-sftp.js';
import { startJobServer, type ServerProcess } from '../support/job-server.js';
import { awaitOperation, provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import type { SubstrateDriver } from '../../server/src/substrate/driver.js';
import { createSubstrate } from '../../server/src/substrate/index.js';

const ENCRYPTION_KEY = randomBytes(32).toString('base64');
const dataDir = join(process.cwd(), '.tmp', `imports-restart-${randomUUID()}`);

let smtp: TestSmtp;
let app: TestApp;
let staff: Staff;
let site: Provisioned;
let substrate: SubstrateDriver;
let server: ServerProcess | null = null;
const peers: HostileSftp[] = [];

const startServer = (env: Record<string, string> = {}): Promise<ServerProcess> =>
  startJobServer({ databaseUrl: app.databaseUrl, dataDir, encryptionKey: ENCRYPTION_KEY, smtpUrl: smtp.url, env });

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
    env: {
      WORKER: 'off',
      SMTP_URL: smtp.url,
      SOURCE_RATE_LIMIT_SCALE: '1000',
      ENCRYPTION_KEY,
      IMPORT_ALLOWED_NETWORKS: '127.0.0.0/8',
    },
  });
  substrate = createSubstrate('local', { dataDir });
  server = await startServer();
  staff = await staffMember(app, smtp, 'imr-staff', ['manage_services']);
  const orgId = (
    await staff.plain.organizationCreate({ body: { name: 'Restart', slug: `restart-${Date.now().toString(36)}` } })
  ).id;
  const projectId = (await staff.plain.projectCreate({ path: { id: orgId }, body: { name: 'Restart', slug: 'restart' } })).id;
  site = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Restarted' });
  const stop = await staff.plain.serviceInstancePower({ path: { id: site.serviceInstanceId }, body: { action: 'stop' } });
  expect((await awaitOperation(staff.plain, site.serviceInstanceId, stop.operation_id, 60_000)).status).toBe('succeeded');
}, 300_000);

afterAll(async () => {
  await stopServer();
  await substrate?.close({ stopUnits: true });
  for (const peer of peers) await peer.close();
  await rm(dataDir, { recursive: true, force: true });
  await app?.close();
  await smtp?.close();
});

const volumeFile = (...rest: string[]) => join(dataDir, 'volumes', site.volumeResourceId, ...rest);

async function leftovers(): Promise<string[]> {
  const names = await readdir(volumeFile(), { recursive: true });
  return names.filter((n) => n.split('/').at(-1)!.startsWith('.svc-import-'));
}

async function importStatus(id: string): Promise<string> {
  return (await staff.plain.importGet({ path: { id: site.serviceInstanceId, import_id: id } })).status;
}

interface Case {
  phase: 'preparing' | 'listing' | 'transfer';
  mode: HostileMode;
  ends: 'cancelled' | 'failed';
}

const cases: Case[] = [
  { phase: 'preparing', mode: 'silent-listing', ends: 'cancelled' },
  { phase: 'listing', mode: 'silent-listing', ends: 'cancelled' },
  { phase: 'listing', mode: 'silent-listing', ends: 'failed' },
  { phase: 'transfer', mode: 'stalled-transfer', ends: 'cancelled' },
  { phase: 'transfer', mode: 'stalled-transfer', ends: 'failed' },
];

it.each(cases)(
  'killed -9 in $phase, $ends meanwhile: the next server does not resume it',
  { timeout: 240_000 },
  async ({ phase, mode, ends }) => {
    await stopServer();
    server = await startServer(phase === 'preparing' ? { FAILPOINT_HOLD: 'import:preparing' } : {});
    // An earlier import's temporary file, as a run killed mid-file leaves it.
    await writeFile(volumeFile(`.svc-import-${randomBytes(8).toString('hex')}.tmp`), 'stale');
    const peer = await startHostileSftp(mode);
    peers.push(peer);
    const accepted = await staff.plain.importStart({
      path: { id: site.serviceInstanceId },
      body: { host: '127.0.0.1', port: peer.port, username: peer.username, password: peer.password, remote_path: '/' },
    });
    if (phase === 'preparing') await server.waitFor(/FAILPOINT_HOLD/, 60_000);
    else await peer.silent;
    expect(await importStatus(accepted.id)).toBe(phase === 'preparing' ? 'preparing' : 'running');
    await server.kill9();
    server = null;
    const sessions = peer.sessions;
    if (ends === 'cancelled') {
      await staff.plain.importCancel({ path: { id: site.serviceInstanceId, import_id: accepted.id } });
    } else {
      // What a run killed right after deciding the failure leaves: the outcome, the phase still running.
      await app.sql`update service_imports set outcome = 'failed', error = 'decided before the kill' where id = ${accepted.id}`;
    }
    server = await startServer();
    const op = await awaitOperation(staff.plain, site.serviceInstanceId, accepted.operation_id, 60_000);
    expect(op.status).toBe(ends);
    const done = await staff.plain.importGet({ path: { id: site.serviceInstanceId, import_id: accepted.id } });
    expect(done).toMatchObject({ status: ends, error: ends === 'failed' ? 'decided before the kill' : null });
    expect(peer.sessions).toBe(sessions);
    expect(await leftovers()).toEqual([]);
  },
);
