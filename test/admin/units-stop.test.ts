// `npm run admin -- units stop --all | SERVICE` as an operator runs it (issue 34): units stop through
// the substrate driver, their programs with them, and the platform's reconcile (what the next
// `npm start` runs) starts again those that should run.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { staffMember } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { signedIn } from '../support/organizations.js';
import { serverArgs } from '../support/program.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let first: Provisioned;
let second: Provisioned;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  const staff = await staffMember(app, smtp, 'us-staff', ['manage_services']);
  const owner = await signedIn(app, smtp, 'us-owner');
  const orgId = (
    await owner.api.organizationCreate({ body: { name: 'Units', slug: `units-${Date.now().toString(36)}` } })
  ).id;
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Main', slug: 'main' } })
  ).id;
  [first, second] = (await Promise.all(
    ['One', 'Two'].map((name) =>
      provisionService(staff.elevated, { projectId, productSlug: 'web-app', name }),
    ),
  )) as [Provisioned, Provisioned];
}, 180_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

async function admin(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: Record<string, string | undefined> = { ...process.env, NODE_ENV: 'test' };
  // The server's environment: its database, and its DATA_DIR (this app's own substrate directory).
  env.DATABASE_URL = app.databaseUrl;
  env.DATA_DIR = app.substrateDir;
  const child = spawn(process.execPath, [...(await serverArgs('scripts/admin.ts')), ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  return { code, stdout, stderr };
}

const state = async (s: Provisioned) => (await app.substrate!.unitStatus(s.primaryResourceId)).state;

it("stops one service's units, then every unit; the reconcile starts them again", async () => {
  expect([await state(first), await state(second)]).toEqual(['running', 'running']);
  const one = await admin(['units', 'stop', first.serviceInstanceId]);
  expect(one.code, one.stderr).toBe(0);
  expect(one.stdout).toContain('stopped the units of');
  expect([await state(first), await state(second)]).toEqual(['stopped', 'running']);

  const all = await admin(['units', 'stop', '--all']);
  expect(all.code, all.stderr).toBe(0);
  expect([await state(first), await state(second)]).toEqual(['stopped', 'stopped']);

  await app.worker!.run('reconcile_units');
  expect([await state(first), await state(second)]).toEqual(['running', 'running']);
}, 120_000);

it('refuses a malformed or unknown service (usage 2, failure 1), stopping nothing', async () => {
  const bad = await admin(['units', 'stop', 'not-an-id']);
  expect(bad.code).toBe(2);
  const unknown = await admin(['units', 'stop', '00000000-0000-4000-8000-000000000000']);
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toContain('no service instance');
  expect(await state(first)).toBe('running');
}, 60_000);
