// The stored day series (usage_day_series, server/src/features/metrics/days.ts) on a frozen clock: a
// 7d or 30d answer built from them is the same bytes as the answer computed wholly live, whatever days
// are stored; the rollup job stores only days that can no longer change and prunes them with the rollups.
// The process keeps the stored days it read: an edited or deleted row shows once it forgets them.
// 30 days of 5-minute steps are inserted directly, as the metrics bench does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgetStoredDays } from '../../server/src/features/metrics/days.js';
import { rollUpAndPrune } from '../../server/src/features/metrics/sampler.js';
import { API_BASE_PATH } from '../../server/src/spec.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { taskContextOf } from '../support/task-context.js';
import { provisionService, serviceCustomer, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

const DAY = 86_400_000;
// Not on a day's boundary: the 30-day window's first and last days are partial.
const NOW = new Date('2026-11-30T09:37:12.000Z');

let app: TestApp;
let smtp: TestSmtp;
let token: string;
let web: Provisioned;
/** A second service of the same customer, with nothing measured. */
let quiet: Provisioned;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  app.clock.set(NOW);
  const customer = await serviceCustomer(app, smtp, 'day-series');
  token = (
    await customer.owner.api.meApiTokenCreate({
      body: {
        name: 'metrics',
        authorization: { grants: [{ capability: 'services.read', scope: { kind: 'all' } }] },
      },
    })
  ).secret;
  web = await provisionService(customer.staff.elevated, {
    projectId: customer.projectId,
    productSlug: 'web-app',
    name: 'Site',
  });
  quiet = await provisionService(customer.staff.elevated, {
    projectId: customer.projectId,
    productSlug: 'web-app',
    name: 'Quiet',
  });
}, 180_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

const contextOf = () => taskContextOf(app);

async function body(period: '7d' | '30d', of = web): Promise<Buffer> {
  const res = await fetch(
    `${app.baseUrl}${API_BASE_PATH}/service-instances/${of.serviceInstanceId}/metrics?period=${period}`,
    { headers: { authorization: `Bearer ${token}` } },
  );
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

const storedDays = async () =>
  (
    await app.sql<{ day: string }[]>`
      select day::text as day from usage_day_series where service_instance_id = ${web.serviceInstanceId} order by day`
  ).map((r) => r.day);

/** The answers with no stored day: everything live. */
async function live(): Promise<[Buffer, Buffer]> {
  const saved = await app.sql`select * from usage_day_series`;
  await app.sql`delete from usage_day_series`;
  forgetStoredDays();
  const answers: [Buffer, Buffer] = [await body('30d'), await body('7d')];
  if (saved.length > 0) await app.sql`insert into usage_day_series ${app.sql(saved)}`;
  return answers;
}

describe('stored day series', () => {
  it('answers 7d and 30d with the same bytes as computed live, whichever days are stored', async () => {
    const until = Math.floor(NOW.getTime() / 300_000) * 300_000;
    // 30 days of steps and a little more, values with long decimal forms, gaps: every 97th step, the
    // whole of 11-10 and 11-20's afternoon. The last two hours only as raw samples, not rolled up yet.
    await app.sql`
      insert into usage_rollups (service_instance_id, at, cpu_percent, memory_bytes, disk_bytes, network_rx_bps, network_tx_bps)
      select ${web.serviceInstanceId}, at, 50 + 50 * sin(i), 2e8 + i * 1000.5, case when i % 5 = 0 then null else 5e8 end,
             (i - 4000) / 7.0,
             case when i % 11 = 0 then 'NaN'::float8 when i % 13 = 0 then '-Infinity'::float8 else 1e-7 * i end
      from generate_series(${new Date(until - 31 * DAY)}::timestamptz, ${new Date(until - 2 * 3600_000)}::timestamptz - interval '5 minutes', interval '5 minutes')
             with ordinality g(at, i)
      where i % 97 <> 0 and at::date <> '2026-11-10'
        and not (at >= '2026-11-20T12:00:00Z' and at < '2026-11-21T00:00:00Z')`;
    await app.sql`
      insert into usage_samples (service_instance_id, at, cpu_percent, memory_bytes, disk_bytes, network_rx_bps, network_tx_bps)
      select ${web.serviceInstanceId}, at, (extract(epoch from at)::bigint % 1000) / 3.0, 3e8, 6e8, 1, 2
      from generate_series(${new Date(until - 2 * 3600_000)}::timestamptz, ${NOW}::timestamptz, interval '10 seconds') at`;
    const [live30, live7] = await live();

    await rollUpAndPrune(contextOf());
    const days = await storedDays();
    // From the first day kept whole (11-01: 30 days before is 10-31 09:37) to the last one that ended
    // before the 24 hours rolled up (11-28 ended 11-29 00:00); 11-10 had nothing measured, so it is no
    // row, read live. The window's partial first day (10-31 from 09:40) is read live.
    expect(days[0]).toBe('2026-11-01');
    expect(days.at(-1)).toBe('2026-11-28');
    expect(days).toHaveLength(27);
    expect(days).not.toContain('2026-11-10');

    expect((await body('30d')).equals(live30)).toBe(true);
    expect((await body('7d')).equals(live7)).toBe(true);
    // The same with every day stored and one missing (read live in between).
    await app.sql`delete from usage_day_series where day = '2026-11-20'`;
    forgetStoredDays();
    expect((await body('30d')).equals(live30)).toBe(true);
    expect((await body('7d')).equals(live7)).toBe(true);
    // And still the same once the raw samples were rolled up and everything is live again.
    const [again30, again7] = await live();
    expect(again30.equals(live30)).toBe(true);
    expect(again7.equals(live7)).toBe(true);

    // The stored days are what the answer is read from, once: kept, an edited row does not show (a
    // stored day never changes otherwise), and read again, it does.
    expect((await body('30d')).equals(live30)).toBe(true);
    // Kept by service: the other service's days, with the first one's kept, are still its own (gaps).
    const other = JSON.parse((await body('30d', quiet)).toString()) as {
      series: Record<string, [string, unknown][]>;
    };
    for (const points of Object.values(other.series)) {
      expect(points).toHaveLength(8640);
      expect(points.every((p) => p[1] === null)).toBe(true);
    }
    await app.sql`
      update usage_day_series set cpu_percent = regexp_replace(cpu_percent, ',[^],]*]', ',7]', 'g')
      where service_instance_id = ${web.serviceInstanceId} and day = '2026-11-25'`;
    expect((await body('30d')).equals(live30)).toBe(true);
    forgetStoredDays();
    const m = JSON.parse((await body('30d')).toString()) as { series: { cpu_percent: [string, number][] } };
    const day = m.series.cpu_percent.filter((p) => p[0].startsWith('2026-11-25'));
    expect(day).toHaveLength(288);
    expect(day.every((p) => p[1] === 7)).toBe(true);
    await app.sql`delete from usage_day_series where day = '2026-11-25'`;
    forgetStoredDays();
  });

  it('stores a day once it can no longer change and prunes it with the rollups', async () => {
    // Eleven hours on, 11-29 is still within the 24 hours rolled up; 12-00 into 11-30 it is not.
    app.clock.set(new Date(NOW.getTime() + 11 * 3600_000));
    await rollUpAndPrune(contextOf());
    expect((await storedDays()).at(-1)).toBe('2026-11-28');
    app.clock.set(new Date('2026-12-01T00:02:00Z'));
    await rollUpAndPrune(contextOf());
    const days = await storedDays();
    expect(days.at(-1)).toBe('2026-11-29');
    // 30 days before is 11-01 00:02: 11-01 lost its first steps, so it and the days before are gone.
    expect(days[0]).toBe('2026-11-02');
    const [{ first }] = await app.sql<[{ first: Date }]>`
      select min(at) as first from usage_rollups where service_instance_id = ${web.serviceInstanceId}`;
    expect(first.toISOString()).toBe('2026-11-01T00:05:00.000Z');
    const [live30] = await live();
    expect((await body('30d')).equals(live30)).toBe(true);
  });
});
