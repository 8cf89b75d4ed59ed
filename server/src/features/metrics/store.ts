// All SQL of usage metrics (DECISIONS.md §8 "Usage metrics").
import type { Db, Sql } from '../../db/client.js';

export interface SampleRow {
  service_instance_id: string;
  at: Date;
  cpu_percent: number | null;
  memory_bytes: number | null;
  disk_bytes: number | null;
  network_rx_bps: number | null;
  network_tx_bps: number | null;
  cpu_ns: number | null;
  rx_bytes: number | null;
  tx_bytes: number | null;
}

/** Takes the slot for this process; false when another sampler has it. */
export async function claimSlot(db: Db, at: Date, now: Date): Promise<boolean> {
  const rows = await db`
    insert into usage_sample_slots (at, claimed_at) values (${at}, ${now}) on conflict (at) do nothing returning 1`;
  return rows.length > 0;
}

/** What the sampler measures: each running unit with its service's plan `cpu` and its volume. */
export interface SampledUnit {
  unit_id: string;
  volume_id: string | null;
  service_instance_id: string;
  cpu: number;
}

export async function sampledUnits(db: Db): Promise<SampledUnit[]> {
  return db<SampledUnit[]>`
    select r.id as unit_id, r.volume_id, r.service_instance_id, cp.cpu
    from service_resources r
    join service_instances s on s.id = r.service_instance_id
    join catalog_products cp on cp.id = s.product_id
    where r.deleted_at is null and r.kind in ('virtual_machine', 'workload') and r.status = 'running'
      and s.status = 'running'
    order by r.service_instance_id, r.id`;
}

/** Each service's latest sample since `since`: the counters the next rates come from. */
export async function latestSamples(db: Db, since: Date): Promise<Map<string, SampleRow>> {
  const rows = await db<SampleRow[]>`
    select distinct on (service_instance_id) * from usage_samples
    where at >= ${since} order by service_instance_id, at desc`;
  return new Map(
    rows.map((r) => [
      r.service_instance_id,
      { ...r, cpu_ns: num(r.cpu_ns), rx_bytes: num(r.rx_bytes), tx_bytes: num(r.tx_bytes) },
    ]),
  );
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export async function insertSamples(db: Db, rows: SampleRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db`insert into usage_samples ${db(rows)} on conflict do nothing`;
}

/**
 * Averages each finished 5-minute step before `until` not rolled up yet (from `since`): a step is
 * averaged over the samples it holds; a step without any is no row (a gap).
 */
export async function rollUp(db: Db, since: Date, until: Date): Promise<number> {
  const rows = await db`
    insert into usage_rollups (service_instance_id, at, cpu_percent, memory_bytes, disk_bytes, network_rx_bps, network_tx_bps)
    select service_instance_id, date_bin('5 minutes', at, timestamptz 'epoch'), avg(cpu_percent), avg(memory_bytes),
           avg(disk_bytes), avg(network_rx_bps), avg(network_tx_bps)
    from usage_samples where at >= ${since} and at < ${until}
    group by 1, 2
    on conflict (service_instance_id, at) do nothing
    returning 1`;
  return rows.length;
}

export async function prune(db: Db, now: Date): Promise<void> {
  await db`delete from usage_samples where at < ${new Date(now.getTime() - 24 * 3600_000)}`;
  await db`delete from usage_rollups where at < ${new Date(now.getTime() - 30 * 86400_000)}`;
  await db`delete from usage_sample_slots where at < ${new Date(now.getTime() - 3600_000)}`;
}

/** Each series' values from the first step to the last, comma-separated: PostgreSQL's text of each value, `null` for a gap. */
export interface SeriesText {
  cpu_percent: string;
  memory_bytes: string;
  disk_bytes: string;
  network_rx_bps: string;
  network_tx_bps: string;
}

/**
 * The period's series in one statement: a step per `step` from `first` to `last`, joined to what was
 * measured in it. PostgreSQL formats the values (float8 text, the shortest that reads back the same)
 * and joins them, so a 30-day answer reaches Node as five strings, not 8,640 rows of five values.
 * `step` is 10 s (each raw sample) or 5 minutes (the averages).
 */
export async function seriesText(
  db: Db,
  serviceId: string,
  first: Date,
  last: Date,
  stepSeconds: number,
): Promise<SeriesText> {
  const measured =
    stepSeconds === 10
      ? db`
          select at, cpu_percent, memory_bytes::float8 as memory_bytes, disk_bytes::float8 as disk_bytes,
                 network_rx_bps, network_tx_bps
          from usage_samples where service_instance_id = ${serviceId} and at >= ${first}`
      : steps(db, serviceId, first, last);
  const [row] = await db<[SeriesText]>`
    with v as (${measured})
    select array_to_string(array_agg(v.cpu_percent order by g.at), ',', 'null') as cpu_percent,
           array_to_string(array_agg(v.memory_bytes order by g.at), ',', 'null') as memory_bytes,
           array_to_string(array_agg(v.disk_bytes order by g.at), ',', 'null') as disk_bytes,
           array_to_string(array_agg(v.network_rx_bps order by g.at), ',', 'null') as network_rx_bps,
           array_to_string(array_agg(v.network_tx_bps order by g.at), ',', 'null') as network_tx_bps
    from generate_series(${first}::timestamptz, ${last}::timestamptz, make_interval(secs => ${stepSeconds})) g(at)
    left join v on v.at = g.at`;
  return row;
}

/**
 * 5-minute steps: the rolled-up ones, then those after the latest rollup averaged from raw samples.
 * The rollup takes every finished step at once (rollUp), so a step before the latest rolled-up one
 * without a row had nothing measured when it ran: a gap, as it stays once its raw samples are pruned.
 * Raw samples are read only after the latest rollup, not all 24 hours of them (the metrics bench).
 */
function steps(db: Db, serviceId: string, from: Date, last: Date) {
  // Bounded above too: a day series read (days.ts) asks for the window's first partial day alone. Which
  // raw samples count is still decided by the latest rollup from `from` on, as for the whole window.
  return db`
    select at, cpu_percent, memory_bytes, disk_bytes, network_rx_bps, network_tx_bps
    from usage_rollups where service_instance_id = ${serviceId} and at >= ${from} and at <= ${last}
    union all
    select date_bin('5 minutes', s.at, timestamptz 'epoch'), avg(s.cpu_percent), avg(s.memory_bytes),
           avg(s.disk_bytes), avg(s.network_rx_bps), avg(s.network_tx_bps)
    from usage_samples s
    where s.service_instance_id = ${serviceId}
      and s.at >= greatest(${from}::timestamptz, (select max(at) + interval '5 minutes' from usage_rollups
                                                  where service_instance_id = ${serviceId} and at >= ${from}))
      and s.at < ${last}::timestamptz + interval '5 minutes'
    group by 1`;
}

/**
 * A stored day: `day` as `YYYY-MM-DD` (UTC) and each series' 288 points, `["<time>",<value>]`
 * comma-separated, as json.ts writes them.
 */
export interface DaySeries extends SeriesText {
  day: string;
}

/** The service's stored days among `days` (`YYYY-MM-DD`), oldest first: a day not stored is no row. */
export async function daySeries(db: Db, serviceId: string, days: string[]): Promise<DaySeries[]> {
  return db<DaySeries[]>`
    select day::text as day, cpu_percent, memory_bytes, disk_bytes, network_rx_bps, network_tx_bps
    from usage_day_series
    where service_instance_id = ${serviceId} and day = any(${days}::date[])
    order by day`;
}

/** Days from `fromDay` to `toDay` (inclusive) whose series the rollup job has not written yet. */
export async function pendingDays(db: Db, fromDay: string, toDay: string): Promise<string[]> {
  const rows = await db<{ day: string }[]>`
    select d::date::text as day from generate_series(${fromDay}::date, ${toDay}::date, interval '1 day') d
    where not exists (select 1 from usage_day_series_done done where done.day = d::date)
    order by 1`;
  return rows.map((r) => r.day);
}

/**
 * Writes day `day`'s points for each service with a rollup in it, as json.ts writes points: the time
 * as toISOString, the value as seriesText gives it (float8's text), null for a gap and for what is no
 * JSON number (NaN, ±Infinity), so a stored day is the same bytes as the day computed live. A service
 * with no rollup that day gets no row: read live, all gaps.
 */
export async function writeDaySeries(db: Sql, day: string): Promise<void> {
  await db.begin(async (tx) => {
    await tx`
      with bounds as (select ${day}::date::timestamp at time zone 'UTC' as start),
      services as (
        select distinct service_instance_id from usage_rollups, bounds
        where at >= bounds.start and at < bounds.start + interval '1 day'),
      steps as (
        select s.service_instance_id, g.at,
               '["' || to_char(g.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '",' as head,
               v.cpu_percent, v.memory_bytes, v.disk_bytes, v.network_rx_bps, v.network_tx_bps
        from services s
        cross join bounds
        cross join lateral generate_series(bounds.start, bounds.start + interval '1 day' - interval '5 minutes',
                                           interval '5 minutes') g(at)
        left join usage_rollups v on v.service_instance_id = s.service_instance_id and v.at = g.at)
      insert into usage_day_series (service_instance_id, day, cpu_percent, memory_bytes, disk_bytes, network_rx_bps, network_tx_bps)
      select service_instance_id, ${day}::date,
             string_agg(head || point_value(cpu_percent) || ']', ',' order by at),
             string_agg(head || point_value(memory_bytes) || ']', ',' order by at),
             string_agg(head || point_value(disk_bytes) || ']', ',' order by at),
             string_agg(head || point_value(network_rx_bps) || ']', ',' order by at),
             string_agg(head || point_value(network_tx_bps) || ']', ',' order by at)
      from steps
      group by service_instance_id
      on conflict (service_instance_id, day) do nothing`;
    await tx`insert into usage_day_series_done (day) values (${day}::date) on conflict do nothing`;
  });
}

/** Drops stored days before `day`: they start before the 30 days kept, so no window covers them whole. */
export async function pruneDaySeries(db: Db, day: string): Promise<void> {
  await db`delete from usage_day_series where day < ${day}::date`;
  await db`delete from usage_day_series_done where day < ${day}::date`;
}
