-- Usage metrics of services (DECISIONS.md §8 "Usage metrics"): one row per service per 10-second slot it
-- was measured in (raw, kept 24 hours), and 5-minute averages (kept 30 days). A slot without a row is a
-- gap, answered as null. The counters (cumulative CPU time and network bytes) are kept beside the rates
-- so the next slot's rates come from them.
create table usage_samples (
  service_instance_id uuid not null references service_instances (id) on delete cascade,
  at timestamptz not null,
  cpu_percent double precision,
  memory_bytes bigint,
  disk_bytes bigint,
  network_rx_bps double precision,
  network_tx_bps double precision,
  cpu_ns bigint,
  rx_bytes bigint,
  tx_bytes bigint,
  primary key (service_instance_id, at)
);
create index usage_samples_at on usage_samples (at);

create table usage_rollups (
  service_instance_id uuid not null references service_instances (id) on delete cascade,
  -- The start of the 5-minute step.
  at timestamptz not null,
  cpu_percent double precision,
  memory_bytes double precision,
  disk_bytes double precision,
  network_rx_bps double precision,
  network_tx_bps double precision,
  primary key (service_instance_id, at)
);
create index usage_rollups_at on usage_rollups (at);

-- One sampler per slot for the whole platform: whoever inserts a slot's row samples it.
create table usage_sample_slots (
  at timestamptz primary key,
  claimed_at timestamptz not null
);
