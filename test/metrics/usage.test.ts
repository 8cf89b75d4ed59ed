// What the local substrate measures of a real running unit (substrate/local/usage.ts): its CPU time
// growing, its memory, its volume's size; without a veth of its own the network counters are null, not
// zero; a stopped unit answers nothing. Then the sampler and GET /metrics over a unit that spins and
// holds memory: its CPU at its plan's cap, its memory at least what it holds. CPU time is real time's,
// so this file waits 1.5 real seconds once and one 10-second slot once. Last, a stopping worker does not
// wait out the sampler's minute.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { unitVethName } from '../../server/src/substrate/local/sandbox/names.js';
import {
  ensureUnitLimits,
  joinUnitLimits,
  removeUnitLimits,
  unitLimitDirs,
} from '../../server/src/substrate/local/sandbox/limits.js';
import { SAMPLE_MS, sampleMinute, sampleSlot } from '../../server/src/features/metrics/sampler.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { taskContextOf } from '../support/task-context.js';
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

const MiB = 1024 * 1024;
const HOG_MIB = 256;
/** Two threads spinning (more than a 1-CPU plan allows) beside HOG_MIB of touched memory. */
const HOG = `
const { Worker } = require('node:worker_threads');
const held = Buffer.alloc(${HOG_MIB} * 1024 * 1024, 1);
for (let i = 0; i < 2; i++) new Worker('for (;;) {}', { eval: true });
setInterval(() => { held[0]++; }, 1000);
`;

/** utime + stime of a process, in seconds (USER_HZ 100). */
async function cpuSecondsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

it('a unit spinning past its plan shows CPU at its cap, and the memory it holds', async () => {
  await power('start');
  const unit = web.primaryResourceId;
  const [plan] = await app.sql<{ cpu: number; memory_mb: number }[]>`
    select cp.cpu, cp.memory_mb from service_instances s join catalog_products cp on cp.id = s.product_id
    where s.id = ${web.serviceInstanceId}`;
  // The service's own unit, its program swapped for the spinner: same id, volume and plan limits.
  await app.substrate!.stopUnit(unit);
  await app.substrate!.startUnit({
    id: unit,
    kind: 'workload',
    volumeId: web.volumeResourceId,
    command: [process.execPath, '-e', HOG],
    limits: { cpu: plan!.cpu, memoryMb: plan!.memory_mb },
  });
  // startUnit answers once the agent is spawned; the hog runs a moment later (on a busy machine, seconds).
  // Holding its memory, it is past its start and its threads spin: the first sample must see it running.
  for (let seen = 0; seen < HOG_MIB * MiB; await sleep(100)) {
    seen = (await app.substrate!.unitUsage(unit, web.volumeResourceId))?.memoryBytes ?? 0;
  }
  // What an uncapped unit gets meanwhile: one spinner in a group beside the unit's, so a host too busy
  // to give the unit its cap lowers the bar by what it gives any unit, not the test's luck.
  const reference = `usage-reference-${randomUUID()}`;
  const spinner = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
  try {
    joinUnitLimits(ensureUnitLimits(reference, null), [spinner.pid!]);
    const ctx = taskContextOf(app);
    // The clock moved to a slot's start, so each sample is measured as its slot begins, 10 s apart.
    const first = Math.ceil((Date.now() + 1000) / SAMPLE_MS) * SAMPLE_MS;
    app.clock.set(new Date(first));
    const [spunBefore, startedAt] = [await cpuSecondsOf(spinner.pid!), performance.now()];
    expect(await sampleSlot(ctx, app.clock.now())).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, first + SAMPLE_MS - app.clock.now().getTime()));
    const referenceCores =
      ((await cpuSecondsOf(spinner.pid!)) - spunBefore) / ((performance.now() - startedAt) / 1000);
    expect(await sampleSlot(ctx, app.clock.now())).toBe(1);

    const m = await owner.api.serviceMetricsGet({ path: { id: web.serviceInstanceId } });
    const at = new Date(first + SAMPLE_MS).toISOString();
    const cpu = m.series.cpu_percent.find(([t]) => t === at)![1]!;
    const memory = m.series.memory_bytes.find(([t]) => t === at)![1]!;
    if (process.env.USAGE_DEBUG) console.log(JSON.stringify({ cpu, memory, referenceCores }));
    // A percent of the plan's CPUs: two spinners under a 1-CPU cap stay at 100, not 200.
    expect(cpu).toBeLessThanOrEqual(110);
    expect(cpu).toBeGreaterThanOrEqual((60 * Math.min(plan!.cpu, referenceCores)) / plan!.cpu);
    expect(memory).toBeGreaterThanOrEqual(HOG_MIB * MiB);
    expect(memory).toBeLessThanOrEqual(plan!.memory_mb * MiB);
  } finally {
    spinner.kill('SIGKILL');
    await new Promise((resolve) => spinner.once('exit', resolve));
    removeUnitLimits(reference);
    await app.substrate!.stopUnit(unit);
  }
}, 90_000);

it("a stopping worker ends the sampler's minute at once instead of waiting out its slots", async () => {
  const stop = new AbortController();
  const ctx = taskContextOf(app, { stopping: stop.signal });
  // A minute of its own, after the slots the test above sampled: its first slot is sampled at once and
  // the next is 10 s away.
  const first = Math.ceil((app.clock.now().getTime() + 60_000) / 60_000) * 60_000;
  app.clock.set(new Date(first));
  const minute = sampleMinute(ctx);
  const slotsFrom = (at: number) =>
    app.sql<
      { at: Date }[]
    >`select at from usage_sample_slots where at >= ${new Date(at)} and at < ${new Date(first + 60_000)}`;
  await vi.waitUntil(async () => (await slotsFrom(first)).length === 1, { timeout: 10_000, interval: 50 });
  stop.abort();
  // Without the stop it would take the minute's five other slots, 50 s.
  expect(await Promise.race([minute.then(() => 'ended'), sleep(5_000).then(() => 'still waiting')])).toBe(
    'ended',
  );
  expect(await slotsFrom(first + 1)).toEqual([]);
});
