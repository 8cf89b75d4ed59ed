-- Backups of a service's volume (document 2 §2 "Backup", §3, §4 "Backups"; DECISIONS.md §6 "Backups"):
-- the customer's snapshots, each made and restored by an operation holding the service.
create table service_backups (
  id uuid primary key,
  service_instance_id uuid not null references service_instances (id) on delete cascade,
  volume_id uuid not null references service_resources (id),
  name text not null check (char_length(name) between 1 and 100),
  status text not null check (status in ('creating', 'ready', 'failed', 'restoring')),
  restore_phase text check (restore_phase in ('stopping', 'reverting', 'starting')),
  -- What the substrate answered when the snapshot was made; a restore checks the archive against both.
  size_bytes bigint check (size_bytes >= 0),
  sha256 text check (sha256 ~ '^[0-9a-f]{64}$'),
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null,
  completed_at timestamptz,
  -- Deleted: listed no more and counted no more; its snapshot is removed by a job, then the row.
  deleted_at timestamptz,
  check ((status = 'restoring') = (restore_phase is not null)),
  check (status <> 'ready' or (size_bytes is not null and sha256 is not null))
);
create index service_backups_volume on service_backups (volume_id, created_at desc) where deleted_at is null;
