// Issue 33 item 8: a resource says what the substrate sees. A web app's unit agent is killed with -9
// (its process group, as a crash takes it); until the converge starts it again the workload and its
// volume read `stopped` with `unit_state` saying so, and the restart is counted with its reason.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { staffMember } from '../admin-content/staff.js';
import { readAgentPid } from '../../server/src/substrate/local/agent-process.js';
import { localLayout } from '../../server/src/substrate/local/layout.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { signedIn, type Caller } from '../support/organizations.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let owner: Caller;
let web: Provisioned;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  const staff = await staffMember(app, smtp, 'ust-staff', ['manage_services']);
  owner = await signedIn(app, smtp, 'ust-owner');
  const orgId = (
    await owner.api.organizationCreate({ body: { name: 'Crash', slug: `ust-${Date.now().toString(36)}` } })
  ).id;
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Main', slug: 'main' } })
  ).id;
  web = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Site' });
}, 120_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

const resources = async () => {
  const { resources: list } = await owner.api.serviceInstanceResourceList({ path: { id: web.serviceInstanceId } });
  const byId = new Map(list.map((r) => [r.id, r]));
  return { unit: byId.get(web.primaryResourceId)!, volume: byId.get(web.volumeResourceId)! };
};

it('reads stopped while the unit is dead, then counts the restart with its reason', async () => {
  expect(await resources()).toMatchObject({
    unit: { status: 'running', unit_state: 'running', restart_count: 0, last_exit_reason: null, last_exited_at: null },
    volume: { status: 'running', unit_state: 'running', restart_count: 0 },
  });

  const pid = await readAgentPid(localLayout(app.substrateDir).unitDir(web.primaryResourceId));
  expect(pid).not.toBeNull();
  process.kill(-pid!, 'SIGKILL');
  const deadline = Date.now() + 5_000;
  while ((await app.substrate!.unitState(web.primaryResourceId)) === 'running') {
    if (Date.now() > deadline) throw new Error('the agent did not die');
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(await resources()).toMatchObject({
    unit: { status: 'stopped', unit_state: 'stopped', restart_count: 0 },
    volume: { status: 'stopped', unit_state: 'stopped' },
  });
  // The instance's status is what its customer asked for: still running.
  expect((await owner.api.serviceInstanceGet({ path: { id: web.serviceInstanceId } })).status).toBe('running');

  await app.worker!.run('reconcile_units');
  const after = await resources();
  expect(after).toMatchObject({
    unit: {
      status: 'running',
      unit_state: 'running',
      restart_count: 1,
      last_exit_reason: expect.stringMatching(/ended without being asked/),
      last_exited_at: app.clock.now().toISOString(),
    },
    volume: { status: 'running', unit_state: 'running', restart_count: 0 },
  });

  // A power stop and start is asked for: not counted.
  for (const action of ['stop', 'start'] as const) {
    const { operation_id } = await owner.api.serviceInstancePower({ path: { id: web.serviceInstanceId }, body: { action } });
    await owner.api.waitForOperation(web.serviceInstanceId, operation_id, { signal: AbortSignal.timeout(30_000) });
  }
  await app.worker!.run('reconcile_units');
  expect((await resources()).unit).toMatchObject({ status: 'running', restart_count: 1 });
}, 60_000);
