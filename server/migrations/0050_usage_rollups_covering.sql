-- GET metrics reads a service's 5-minute steps for up to 30 days (8,640 rows). The rollup job writes
-- every service's step at once, so one service's rows lie on as many heap pages as it has steps: the
-- primary key now carries the values too, and the read is an index-only scan of its leaf pages
-- (with 200 services, half the statement's CPU). The key itself is unchanged (rollUp's on conflict).
alter table usage_rollups
  drop constraint usage_rollups_pkey,
  add primary key (service_instance_id, at)
    include (cpu_percent, memory_bytes, disk_bytes, network_rx_bps, network_tx_bps);
