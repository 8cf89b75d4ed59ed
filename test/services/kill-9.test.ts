// A VPS reinstall survives kill -9 of its server at every phase (SUBSTRATE.md "Durable operations": a
// job records each phase before it acts, so a restarted worker resumes at the phase it was in). Real
// server processes (server/src/main.ts from its bundle: test/support/program.ts) run the jobs on a data directory of their
// own; one parked in a phase by FAILPOINT_HOLD is killed with SIGKILL, and the next finishes the rebuild.
// The API is a test app with WORKER=off, so only the spawned servers run jobs.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { startJobServer, type ServerProcess } from '../support/job-server.js';
import { awaitOperation, provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import type { SubstrateDriver } from '../../server/src/substrate/driver.js';
import { createSubstrate } from '../../server/src/substrate/index.js';

// Both the API and the servers seal and open mail and secrets with it; their data directories differ.
const ENCRYPTION_KEY = randomBytes(32).toString('base64');
const dataDir = join(process.cwd(), '.tmp', `kill-9-${randomUUID()}`);

let smtp: TestSmtp;
let app: TestApp;
let staff: Staff;
let vps: Provisioned;
/** The spawned servers' substrate, read from outside: what they did to volumes and units. */
let substrate: SubstrateDriver;
/** The server process running now, if any: one at a time, so none but the one meant takes the job. */
let server: ServerProcess | null = null;
/** Reinstall operations of the service, in the order the attempts created them. */
const reinstalls: string[] = [];

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
  staff = await staffMember(app, smtp, 'kill9-staff', ['manage_services']);
  const orgId = (
    await staff.plain.organizationCreate({
      body: { name: 'Crash', slug: `crash-${Date.now().toString(36)}` },
    })
  ).id;
  const projectId = (
    await staff.plain.projectCreate({ path: { id: orgId }, body: { name: 'Crash', slug: 'crash' } })
  ).id;
  vps = await provisionService(staff.elevated, { projectId, name: 'Crash box' });
  await stopServer();
}, 90_000);

afterAll(async () => {
  // Servers first: a live one would start the units again (reconcile_units).
  await stopServer();
  await substrate?.close({ stopUnits: true });
  await rm(dataDir, { recursive: true, force: true });
  await app?.close();
  await smtp?.close();
});

const generation = async () => (await substrate.readUnitSignal(vps.primaryResourceId))!.generation;

/** What the job did before the hold: every earlier phase acted, the held one did not. */
type Held = { unit: 'running' | 'stopped'; image: 'old' | 'none' | 'new' };

// Alternating images, so each rebuild shows: provisioning installed debian-12.
const PHASES: [string, { image: string; held: Held }][] = [
  ['stop', { image: 'ubuntu-24.04', held: { unit: 'running', image: 'old' } }],
  ['wipe', { image: 'debian-12', held: { unit: 'stopped', image: 'old' } }],
  ['install', { image: 'ubuntu-24.04', held: { unit: 'stopped', image: 'none' } }],
  ['vm_access', { image: 'debian-12', held: { unit: 'stopped', image: 'new' } }],
  ['boot', { image: 'ubuntu-24.04', held: { unit: 'running', image: 'new' } }],
];

it.each(PHASES)(
  'a reinstall killed -9 in phase %s is finished by the next server',
  { timeout: 90_000 },
  async (phase, { image, held }) => {
    await stopServer();
    const oldImage = await substrate.installedImage(vps.volumeResourceId);
    expect(oldImage).not.toBe(image);
    const generationBefore = await generation();

    server = await startServer({ FAILPOINT_HOLD: `reinstall:${phase}` });
    const accepted = await staff.plain.vpsReinstall({
      path: { id: vps.serviceInstanceId, resource_id: vps.primaryResourceId },
      body: { confirm: true, os_image: image },
    });
    reinstalls.push(accepted.operation_id);

    // Parked: the phase is recorded, and the process says it holds there.
    for (const deadline = Date.now() + 30_000; ;) {
      const op = await staff.plain.serviceOperationGet({
        path: { id: vps.serviceInstanceId, operation_id: accepted.operation_id },
      });
      if (op.status === 'running' && op.phase === phase) break;
      if (op.status !== 'queued' && op.status !== 'running')
        throw new Error(`the reinstall ended ${op.status} before the hold`);
      if (Date.now() > deadline)
        throw new Error(`the reinstall is ${op.status} in ${op.phase ?? '-'}, not held in ${phase}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // pino writes the message last on its line.
    await server.waitFor(new RegExp(`"phase":"${phase}"[^\\n]*"msg":"FAILPOINT_HOLD`));
    expect((await substrate.unitStatus(vps.primaryResourceId)).state).toBe(held.unit);
    const imageWant = { old: oldImage, none: null, new: image }[held.image];
    expect(await substrate.installedImage(vps.volumeResourceId)).toBe(imageWant);
    expect(await generation()).toBe(generationBefore);

    await server.kill9();
    server = null;

    server = await startServer();
    const op = await awaitOperation(staff.plain, vps.serviceInstanceId, accepted.operation_id, 60_000);
    expect(op).toMatchObject({
      kind: 'reinstall',
      status: 'succeeded',
      phase: 'boot',
      progress_percent: 100,
      error: null,
    });
    // It ran again because the dead worker's job was released, not after a lock expiry.
    await server.waitFor(/jobs of a job worker that died were unlocked/, 5_000);

    expect(await substrate.installedImage(vps.volumeResourceId)).toBe(image);
    const status = await substrate.unitStatus(vps.primaryResourceId);
    const newest = await generation();
    expect(newest).toBeGreaterThan(generationBefore);
    expect(status).toMatchObject({ state: 'running', observedGeneration: newest, lastError: null });
    const [row] = await app.sql<{ signal_generation: string; observed_generation: string }[]>`
    select signal_generation, observed_generation from service_resources where id = ${vps.primaryResourceId}`;
    expect([Number(row!.signal_generation), Number(row!.observed_generation)]).toEqual([newest, newest]);

    const { resources } = await staff.plain.serviceInstanceResourceList({
      path: { id: vps.serviceInstanceId },
    });
    expect(resources.find((r) => r.id === vps.primaryResourceId)).toMatchObject({
      status: 'running',
      os_image: image,
    });
    const ops = await app.sql<{ id: string }[]>`
    select id from service_operations
    where service_instance_id = ${vps.serviceInstanceId} and kind = 'reinstall'`;
    expect(ops.map((o) => o.id).sort()).toEqual([...reinstalls].sort());

    expect(await server.stop()).toBe(0);
    server = null;
  },
);
