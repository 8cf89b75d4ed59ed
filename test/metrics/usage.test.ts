// What the local substrate measures of a real running unit (substrate/local/usage.ts): its CPU time
// growing, its memory, its volume's size; without a veth of its own the network counters are null, not
// zero; a stopped unit answers nothing. CPU time is real time's, so this file waits 1.5 real seconds once.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { unitVethName } from '../../server/src/substrate/local/sandbox/names.js';
import { unitLimitDirs } from '../../server/src/substrate/local/sandbox/limits.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { awaitOperation, provisionService, serviceCustomer, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import type { Caller } from '../support/organizations.js';

let app: TestApp;
let smtp: TestSmtp;
let owner: Caller;
let web: Provisioned;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  app.clock.followRealTime();
  const customer = await serviceCustomer(app, smtp, 'usage');
  owner = customer.owner;
  web = await provisionService(customer.staff.elevated, {
    projectId: customer.projectId,
    productSlug: 'web-app',
    name: 'Hog',
  });
}, 180_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

const power = async (action: 'start' | 'stop' | 'restart') => {
  const accepted = await owner.api.serviceInstancePower({
    path: { id: web.serviceInstanceId },
    body: { action },
  });
  expect((await awaitOperation(owner.api, web.serviceInstanceId, accepted.operation_id, 60_000)).status).toBe(
    'succeeded',
  );
};

it('a running unit shows its CPU time growing, its memory and its volume; stopped, nothing', async () => {
  const unit = web.primaryResourceId;
  // In groups of its own where the host confines units, else measured by its agent's process tree.
  const grouped = Object.values(unitLimitDirs(unit)).some((dir) => existsSync(dir));
  await writeFile(
    join(app.substrateDir, 'volumes', web.volumeResourceId, 'data.bin'),
    Buffer.alloc(1024 * 1024, 1),
  );
  const first = (await app.substrate!.unitUsage(unit, web.volumeResourceId))!;
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const second = (await app.substrate!.unitUsage(unit, web.volumeResourceId))!;
  if (process.env.USAGE_DEBUG) console.log(JSON.stringify({ grouped, first, second }));
  expect(first.cpuNanoseconds).toBeGreaterThan(0);
  expect(second.cpuNanoseconds).toBeGreaterThanOrEqual(first.cpuNanoseconds!);
  // The agent and its program: a Node process each.
  expect(second.memoryBytes).toBeGreaterThan(20 * 1024 * 1024);
  expect(second.diskBytes).toBeGreaterThanOrEqual(1024 * 1024);
  // No veth of its own yet (the confinement issue adds one): unknown, not zero.
  const veth = existsSync(join('/sys/class/net', unitVethName(unit)));
  if (!veth) expect([second.networkRxBytes, second.networkTxBytes]).toEqual([null, null]);
  await power('stop');
  expect(await app.substrate!.unitUsage(unit, web.volumeResourceId)).toBeNull();
});
