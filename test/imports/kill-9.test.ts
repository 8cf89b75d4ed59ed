// An import survives kill -9 of its server mid-copy (SUBSTRATE.md "Durable operations"; DECISIONS.md §6
// "Imports"): a real server copying from a slow SFTP server (ssh2's Server) is killed with SIGKILL once
// some files are complete, and the next one resumes the operation, skipping the files already complete
// by size and time (the same inodes: never written again), removing the killed run's temporary files,
// and finishing with every file whole. The remote restarts too: the next server finds its port refused,
// then closed before any greeting, and keeps trying until it answers.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { startJobServer, type ServerProcess } from '../support/job-server.js';
import { awaitOperation, provisionService, type Provisioned } from '../support/services.js';
import { startSsh2Sftp, type Ssh2Sftp } from '../support/sftp-server.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import type { SubstrateDriver } from '../../server/src/substrate/driver.js';
import { createSubstrate } from '../../server/src/substrate/index.js';

const ENCRYPTION_KEY = randomBytes(32).toString('base64');
const dataDir = join(process.cwd(), '.tmp', `imports-kill-9-${randomUUID()}`);
const remoteDir = join(process.cwd(), '.tmp', `imports-kill-9-remote-${randomUUID()}`);
const SMALL = 40;

let smtp: TestSmtp;
let app: TestApp;
let staff: Staff;
let site: Provisioned;
let substrate: SubstrateDriver;
let sftp: Ssh2Sftp;
let server: ServerProcess | null = null;

const startServer = (): Promise<ServerProcess> =>
  startJobServer({ databaseUrl: app.databaseUrl, dataDir, encryptionKey: ENCRYPTION_KEY, smtpUrl: smtp.url });

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
  await mkdir(join(remoteDir, 'files'), { recursive: true });
  for (let i = 0; i < SMALL; i++) {
    await writeFile(join(remoteDir, 'files', `f${String(i).padStart(3, '0')}.txt`), randomBytes(1000));
  }
  await writeFile(join(remoteDir, 'files', 'zz-big.bin'), randomBytes(2 * 1024 * 1024));
  sftp = await startSsh2Sftp(remoteDir);
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
  staff = await staffMember(app, smtp, 'im9-staff', ['manage_services']);
  const orgId = (
    await staff.plain.organizationCreate({
      body: { name: 'Crash', slug: `crash-${Date.now().toString(36)}` },
    })
  ).id;
  const projectId = (
    await staff.plain.projectCreate({ path: { id: orgId }, body: { name: 'Crash', slug: 'crash' } })
  ).id;
  site = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Crash site' });
  const stop = await staff.plain.serviceInstancePower({
    path: { id: site.serviceInstanceId },
    body: { action: 'stop' },
  });
  expect((await awaitOperation(staff.plain, site.serviceInstanceId, stop.operation_id, 60_000)).status).toBe(
    'succeeded',
  );
}, 300_000);

afterAll(async () => {
  await stopServer();
  await substrate?.close({ stopUnits: true });
  await sftp?.close();
  await rm(dataDir, { recursive: true, force: true });
  await rm(remoteDir, { recursive: true, force: true });
  await app?.close();
  await smtp?.close();
});

const volumeFile = (...rest: string[]) => join(dataDir, 'volumes', site.volumeResourceId, ...rest);

it(
  'an import killed -9 mid-copy resumes on the next server, skipping the files already complete',
  { timeout: 240_000 },
  async () => {
    sftp.readDelayMs = 150;
    const accepted = await staff.plain.importStart({
      path: { id: site.serviceInstanceId },
      body: {
        host: '127.0.0.1',
        port: sftp.port,
        username: sftp.username,
        password: sftp.password,
        remote_path: '/files',
      },
    });
    let copied = 0;
    for (const deadline = Date.now() + 60_000; copied < 8;) {
      const now = await staff.plain.importGet({
        path: { id: site.serviceInstanceId, import_id: accepted.id },
      });
      copied = now.files_transferred;
      if (now.status !== 'running' && now.status !== 'preparing')
        throw new Error(`the import ended ${now.status}`);
      if (Date.now() > deadline) throw new Error('the import did not get going');
      await new Promise((r) => setTimeout(r, 50));
    }
    await server!.kill9();
    server = null;
    const complete = new Map<string, number>();
    for (const name of await readdir(volumeFile())) {
      if (!name.startsWith('f')) continue;
      const s = await stat(volumeFile(name));
      if (s.size === 1000) complete.set(name, s.ino);
    }
    expect(complete.size).toBeGreaterThanOrEqual(8);
    expect(complete.size).toBeLessThan(SMALL);

    // The remote is down when the next server resumes: refused, then (a stand-in on its port) closing every
    // connection before the SSH greeting. The import waits, trying again, and goes on once it answers.
    sftp.readDelayMs = 0;
    await sftp.setListening(false);
    server = await startServer();
    await new Promise((r) => setTimeout(r, 500));
    const attempts: Socket[] = [];
    const standIn = createServer((socket) => void attempts.push(socket.destroy()));
    await new Promise<void>((resolve) => standIn.listen(sftp.port, '127.0.0.1', resolve));
    for (const deadline = Date.now() + 30_000; attempts.length < 2;) {
      if (Date.now() > deadline)
        throw new Error(`the resumed import tried ${attempts.length} time(s) in 30 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(
      (await staff.plain.importGet({ path: { id: site.serviceInstanceId, import_id: accepted.id } })).status,
    ).toBe('running');
    await new Promise<void>((resolve) => standIn.close(() => resolve()));
    await sftp.setListening(true);
    const op = await awaitOperation(staff.plain, site.serviceInstanceId, accepted.operation_id, 120_000);
    expect(op).toMatchObject({ kind: 'import', status: 'succeeded' });
    const done = await staff.plain.importGet({
      path: { id: site.serviceInstanceId, import_id: accepted.id },
    });
    expect(done).toMatchObject({
      status: 'succeeded',
      files_total: SMALL + 1,
      files_transferred: SMALL + 1,
      progress_percent: 100,
    });
    for (const [name, ino] of complete) expect((await stat(volumeFile(name))).ino, name).toBe(ino);
    const names = (await readdir(volumeFile())).sort();
    expect(names.filter((n) => n.startsWith('.svc-import-'))).toEqual([]);
    for (const name of names.filter((n) => n.startsWith('f') || n === 'zz-big.bin')) {
      expect(
        (await readFile(volumeFile(name))).equals(await readFile(join(remoteDir, 'files', name))),
        name,
      ).toBe(true);
    }
    expect(names.filter((n) => n.startsWith('f') || n === 'zz-big.bin').length).toBe(SMALL + 1);
    const [row] = await app.sql`select password_sealed from service_imports where id = ${accepted.id}`;
    expect(row!.password_sealed).toBeNull();
  },
);
