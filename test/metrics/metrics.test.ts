// Usage metrics (DECISIONS.md §8 "Usage metrics") on a frozen clock: the sampler's slots measured once
// however many samplers run, rates from counters (a restarted counter is a gap, not a negative rate),
// the 5-minute rollup and pruning, and GET /metrics with a null wherever nothing was measured. The
// substrate's measurements are scripted here (a stand-in for unitUsage); usage.test.ts measures real units.
import { createClient, type SvcClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../server/src/db/client.js';
import { API_BASE_PATH, bundledSpec } from '../../server/src/spec.js';
import { createSchemaValidator } from '../conformance/schema-validator.js';
import type { OpenApiDocument } from '../conformance/spec-walk.js';
import { rollUpAndPrune, sampleSlot } from '../../server/src/features/metrics/sampler.js';
import type { SubstrateDriver, UnitUsage } from '../../server/src/substrate/driver.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { taskContextOf } from '../support/task-context.js';
import { signedIn } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { provisionService, serviceCustomer, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

const T0 = new Date('2026-11-21T12:00:00.000Z');
const S = 10_000;

let app: TestApp;
let smtp: TestSmtp;
let api: SvcClient;
let token: string;
let stranger: SvcClient;
let web: Provisioned;
/** What the scripted substrate answers for the next sample, by unit. */
let usage: UnitUsage | null = null;

const GiB = 1024 ** 3;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  app.clock.set(T0);
  const customer = await serviceCustomer(app, smtp, 'metrics');
  const minted = await customer.owner.api.meApiTokenCreate({
    body: {
      name: 'metrics',
      authorization: { grants: [{ capability: 'services.read', scope: { kind: 'all' } }] },
    },
  });
  token = minted.secret;
  api = createClient({ baseUrl: app.baseUrl, token, retries: 0 });
  stranger = (await signedIn(app, smtp, 'metrics-stranger')).api;
  web = await provisionService(customer.staff.elevated, {
    projectId: customer.projectId,
    productSlug: 'web-app',
    name: 'Site',
  });
}, 180_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

function contextOf(sql = app.sql) {
  const substrate = {
    unitUsage: async (unitId: string) => (unitId === web.primaryResourceId ? usage : null),
  } as unknown as SubstrateDriver;
  return taskContextOf(app, { sql, substrate });
}

const metrics = (period?: '1h' | '24h' | '7d' | '30d') =>
  api.serviceMetricsGet({ path: { id: web.serviceInstanceId }, ...(period ? { query: { period } } : {}) });

/** A unit that used `cpuSeconds` of CPU so far, with these gauges and counters. */
const used = (cpuSeconds: number, rx: number, tx: number, memory = GiB / 2): UnitUsage => ({
  cpuNanoseconds: cpuSeconds * 1e9,
  memoryBytes: memory,
  diskBytes: 5 * 1024 ** 2,
  networkRxBytes: rx,
  networkTxBytes: tx,
});

describe('sampling', () => {
  it('measures each slot once however many samplers run at once', async () => {
    app.clock.set(T0);
    usage = used(100, 0, 0);
    const pools = [
      connect(app.databaseUrl, { max: 2 }),
      connect(app.databaseUrl, { max: 2 }),
      connect(app.databaseUrl, { max: 2 }),
    ];
    try {
      const answers = await Promise.all(pools.map((p) => sampleSlot(contextOf(p), T0)));
      expect(answers.filter((a) => a !== null)).toEqual([1]);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
    const rows =
      await app.sql`select * from usage_samples where service_instance_id = ${web.serviceInstanceId}`;
    expect(rows).toHaveLength(1);
    // The first sample has no earlier counters: its rates are gaps, its gauges are not.
    expect(rows[0]).toMatchObject({ cpu_percent: null, network_rx_bps: null, memory_bytes: String(GiB / 2) });
  });

  it('gives rates from the previous slot: CPU in percent of the plan, bytes per second; a reset counter is a gap', async () => {
    // The web app's plan has 1 cpu: 5 s of CPU in 10 s is 50 %.
    app.clock.set(new Date(T0.getTime() + S));
    usage = used(105, 10_000, 2_000);
    await sampleSlot(contextOf(), app.clock.now());
    // Restarted: its counters began again.
    app.clock.set(new Date(T0.getTime() + 2 * S));
    usage = used(1, 100, 50);
    await sampleSlot(contextOf(), app.clock.now());
    // Not running for a slot (no measurement): a gap; then again, over 20 s since its last sample.
    app.clock.set(new Date(T0.getTime() + 4 * S));
    usage = used(11, 100 + 40_000, 50, GiB);
    await sampleSlot(contextOf(), app.clock.now());

    app.clock.set(new Date(T0.getTime() + 4 * S + 3000));
    const m = await metrics();
    expect(m.period).toBe('1h');
    expect(m.step_seconds).toBe(10);
    expect(m.series.cpu_percent).toHaveLength(360);
    const tail = (name: keyof typeof m.series) => m.series[name].slice(-5);
    const at = (i: number) => new Date(T0.getTime() + i * S).toISOString();
    expect(tail('cpu_percent')).toEqual([
      [at(0), null],
      [at(1), 50],
      [at(2), null],
      [at(3), null],
      [at(4), 50],
    ]);
    expect(tail('network_rx_bytes_per_second')).toEqual([
      [at(0), null],
      [at(1), 1000],
      [at(2), null],
      [at(3), null],
      [at(4), 2000],
    ]);
    expect(tail('network_tx_bytes_per_second')).toEqual([
      [at(0), null],
      [at(1), 200],
      [at(2), null],
      [at(3), null],
      [at(4), 0],
    ]);
    expect(tail('memory_bytes').map((p) => p[1])).toEqual([GiB / 2, GiB / 2, GiB / 2, null, GiB]);
    expect(tail('disk_bytes')[3]).toEqual([at(3), null]);
    // Oldest first, one step apart, ending at the step now falls in.
    expect(m.series.cpu_percent[0]![0]).toBe(new Date(T0.getTime() + 4 * S - 3600_000 + S).toISOString());
  });

  it('a counter the substrate does not keep is null, never zero', async () => {
    app.clock.set(new Date(T0.getTime() + 5 * S));
    usage = {
      cpuNanoseconds: null,
      memoryBytes: 1,
      diskBytes: null,
      networkRxBytes: null,
      networkTxBytes: null,
    };
    await sampleSlot(contextOf(), app.clock.now());
    const m = await metrics('1h');
    const last = (name: keyof typeof m.series) => m.series[name].at(-1)![1];
    expect([
      last('cpu_percent'),
      last('disk_bytes'),
      last('network_rx_bytes_per_second'),
      last('memory_bytes'),
    ]).toEqual([null, null, null, 1]);
  });
});

describe('rollup and keeping', () => {
  it('averages 5-minute steps, keeps raw 24 hours and averages 30 days', async () => {
    await app.sql`delete from usage_samples where service_instance_id = ${web.serviceInstanceId}`;
    // Steps of 12:00 and 12:05 fully sampled with cpu rising, 12:10 empty, 12:15 half.
    const day = new Date('2026-11-22T12:00:00.000Z');
    const rows = [];
    // Thirty 10-second samples a step.
    for (let i = 0; i < 120; i++) {
      if ((i >= 60 && i < 90) || i >= 105) continue;
      rows.push({
        service_instance_id: web.serviceInstanceId,
        at: new Date(day.getTime() + i * S),
        cpu_percent: i < 30 ? 10 : 30,
        memory_bytes: 1000,
        disk_bytes: 2000,
        network_rx_bps: 1,
        network_tx_bps: 2,
        cpu_ns: null,
        rx_bytes: null,
        tx_bytes: null,
      });
    }
    await app.sql`insert into usage_samples ${app.sql(rows)}`;
    app.clock.set(new Date(day.getTime() + 20 * 60_000 + 1000));
    await rollUpAndPrune(contextOf());
    const rolled = await app.sql<{ at: Date; cpu_percent: number }[]>`
      select at, cpu_percent from usage_rollups where service_instance_id = ${web.serviceInstanceId} order by at`;
    expect(rolled.map((r) => [r.at.toISOString(), r.cpu_percent])).toEqual([
      ['2026-11-22T12:00:00.000Z', 10],
      ['2026-11-22T12:05:00.000Z', 30],
      ['2026-11-22T12:15:00.000Z', 30],
    ]);

    const m = await metrics('24h');
    expect(m.step_seconds).toBe(300);
    expect(m.series.cpu_percent).toHaveLength(288);
    expect(m.series.cpu_percent.slice(-5)).toEqual([
      ['2026-11-22T12:00:00.000Z', 10],
      ['2026-11-22T12:05:00.000Z', 30],
      ['2026-11-22T12:10:00.000Z', null],
      ['2026-11-22T12:15:00.000Z', 30],
      ['2026-11-22T12:20:00.000Z', null],
    ]);
    expect((await metrics('7d')).series.memory_bytes).toHaveLength(7 * 288);
    expect((await metrics('30d')).series.disk_bytes.filter((p) => p[1] !== null)).toHaveLength(3);

    // A day later the raw samples are gone; the averages still answer for 7d, until 30 days pass.
    app.clock.set(new Date(day.getTime() + 25 * 3600_000));
    await rollUpAndPrune(contextOf());
    const [{ n }] = await app.sql<[{ n: number }]>`
      select count(*)::int as n from usage_samples where service_instance_id = ${web.serviceInstanceId}`;
    expect(n).toBe(0);
    expect((await metrics('7d')).series.cpu_percent.filter((p) => p[1] !== null)).toHaveLength(3);
    expect((await metrics('1h')).series.cpu_percent.every((p) => p[1] === null)).toBe(true);
    app.clock.set(new Date(day.getTime() + 31 * 86400_000));
    await rollUpAndPrune(contextOf());
    const [{ r }] = await app.sql<[{ r: number }]>`
      select count(*)::int as r from usage_rollups where service_instance_id = ${web.serviceInstanceId}`;
    expect(r).toBe(0);
  });

  it('refuses an unknown period (400) and a stranger (the 404 of an unknown id)', async () => {
    app.clock.set(T0);
    expect(
      await outcome(
        api.serviceMetricsGet({ path: { id: web.serviceInstanceId }, query: { period: '2h' as '1h' } }),
      ),
    ).toEqual([400, 'invalid-request']);
    expect(await outcome(stranger.serviceMetricsGet({ path: { id: web.serviceInstanceId } }))).toEqual([
      404,
      'not-found',
    ]);
  });
});

describe('the answer', () => {
  const day = new Date('2026-12-10T00:00:00.000Z');
  const step = (i: number) => new Date(day.getTime() + i * 300_000);
  const rollup = (i: number, cpu: number | string) => ({
    service_instance_id: web.serviceInstanceId,
    at: step(i),
    cpu_percent: cpu,
    memory_bytes: 1000,
    disk_bytes: 2000,
    network_rx_bps: 1,
    network_tx_bps: 2,
  });
  const sample = (at: Date, cpu: number) => ({
    service_instance_id: web.serviceInstanceId,
    at,
    cpu_percent: cpu,
    memory_bytes: 1000,
    disk_bytes: 2000,
    network_rx_bps: 1,
    network_tx_bps: 2,
    cpu_ns: null,
    rx_bytes: null,
    tx_bytes: null,
  });
  const clear = async () => {
    await app.sql`delete from usage_samples where service_instance_id = ${web.serviceInstanceId}`;
    await app.sql`delete from usage_rollups where service_instance_id = ${web.serviceInstanceId}`;
  };

  it("is the spec's ServiceMetrics in JSON, each value read back exactly, one that is no number null", async () => {
    await clear();
    // PostgreSQL writes these as text (1e-07, 1.5e+300): still the same numbers to a JSON reader.
    const values = [
      '0.30000000000000004',
      '1e-7',
      '123456789.12345679',
      '1.5e300',
      'NaN',
      'Infinity',
      '-Infinity',
      '-0.5',
    ];
    await app.sql`insert into usage_rollups ${app.sql(values.map((v, i) => rollup(i, v)))}`;
    app.clock.set(new Date(step(values.length).getTime() + 1000));
    const res = await fetch(
      `${app.baseUrl}${API_BASE_PATH}/service-instances/${web.serviceInstanceId}/metrics?period=24h`,
      {
        headers: { authorization: `Bearer ${token}` },
      },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = (await res.json()) as { series: Record<string, [string, number | null][]> };
    const spec = bundledSpec as unknown as OpenApiDocument;
    expect(createSchemaValidator(spec).errors({ $ref: '#/components/schemas/ServiceMetrics' }, body)).toEqual(
      [],
    );
    const tail = body.series.cpu_percent!.slice(-values.length - 1);
    expect(tail.map((p) => p[0])).toEqual(
      [...values.keys(), values.length].map((i) => step(i).toISOString()),
    );
    expect(tail.map((p) => p[1])).toEqual([
      0.1 + 0.2,
      1e-7,
      123456789.12345679,
      1.5e300,
      null,
      null,
      null,
      -0.5,
      null,
    ]);
    expect(body.series.memory_bytes!.slice(-2)).toEqual([
      [step(7).toISOString(), 1000],
      [step(8).toISOString(), null],
    ]);
  });

  it('averages raw samples for the steps after the latest rollup; before it, a step the rollup has not is a gap', async () => {
    await clear();
    await app.sql`insert into usage_rollups ${app.sql([rollup(0, 10), rollup(2, 30)])}`;
    // Step 1: a sample the rollup did not see (it came in after the rollup ran). Steps 3 and 4: not rolled up yet.
    const raw = [
      sample(new Date(step(1).getTime() + 50_000), 99),
      sample(step(3), 40),
      sample(new Date(step(3).getTime() + 10_000), 50),
      sample(step(4), 70),
    ];
    await app.sql`insert into usage_samples ${app.sql(raw)}`;
    app.clock.set(new Date(step(4).getTime() + 20_000));
    const m = await metrics('24h');
    expect(m.series.cpu_percent.slice(-5).map((p) => p[1])).toEqual([10, null, 30, 45, 70]);
    // A service with nothing rolled up yet: its raw samples answer.
    await app.sql`delete from usage_rollups where service_instance_id = ${web.serviceInstanceId}`;
    expect((await metrics('24h')).series.cpu_percent.slice(-5).map((p) => p[1])).toEqual([
      null,
      99,
      null,
      45,
      70,
    ]);
  });
});
