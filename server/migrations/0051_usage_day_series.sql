-- A finished UTC day of a service's 5-minute steps never changes once it is older than the last 24 hours
-- (the rollup job only rolls up steps of the last 24 hours; raw samples older than that are pruned), so
-- the rollup job keeps it ready to answer: each series' 288 points, `["<time>",<value>]` comma-separated,
-- the bytes GET metrics writes for them (server/src/features/metrics/json.ts). The 30-day read copies
-- these and computes only the rest live; a day without a row is computed live too.
create table usage_day_series (
  service_instance_id uuid not null references service_instances (id) on delete cascade,
  day date not null,
  cpu_percent text not null,
  memory_bytes text not null,
  disk_bytes text not null,
  network_rx_bps text not null,
  network_tx_bps text not null,
  primary key (service_instance_id, day)
);

-- Days the rollup job has written for every service, so each run looks only at days it has not done
-- (rather than scanning 30 days of rollups every 5 minutes).
create table usage_day_series_done (
  day date primary key
);

-- A value as a point of the answer: float8's text (as array_to_string gives it to the live read), null
-- for a gap and for what JSON has no number for.
create function point_value(v double precision) returns text
language sql immutable parallel safe as $$
  select case when v is null or v in ('NaN'::float8, 'Infinity'::float8, '-Infinity'::float8) then 'null'
              else v::text end
$$;

-- Each series of a day is about 12 kB: kept uncompressed (out of line, as TOAST keeps it), so reading
-- 28 days is a copy, not 140 decompressions per request (the metrics bench).
alter table usage_day_series
  alter column cpu_percent set storage external,
  alter column memory_bytes set storage external,
  alter column disk_bytes set storage external,
  alter column network_rx_bps set storage external,
  alter column network_tx_bps set storage external;
