-- Server imports (document 2 §2 "Server import", §3, §4 "Server imports"; DECISIONS.md §6 "Imports"):
-- files copied from a remote SFTP server into a service's volume by an operation holding the service.
create table service_imports (
  id uuid primary key,
  service_instance_id uuid not null references service_instances (id) on delete cascade,
  volume_id uuid not null references service_resources (id),
  operation_id uuid not null references service_operations (id),
  host text not null check (char_length(host) between 1 and 253),
  -- The address the host resolved to when the import was started and checked: the only one connected to.
  address inet not null,
  port integer not null check (port between 1 and 65535),
  username text not null check (char_length(username) between 1 and 128),
  remote_path text not null,
  target_path text not null default '/',
  delete_extraneous boolean not null,
  status text not null check (status in ('preparing', 'running', 'cleaning_up', 'succeeded', 'failed', 'cancelled')),
  cancel_requested boolean not null default false,
  bytes_transferred bigint not null default 0 check (bytes_transferred >= 0),
  bytes_total bigint check (bytes_total >= 0),
  files_transferred integer not null default 0 check (files_transferred >= 0),
  files_total integer check (files_total >= 0),
  current_file text,
  error text,
  -- How the copy ended, decided before cleaning up (so a restart in cleaning_up still knows it).
  outcome text check (outcome in ('succeeded', 'failed', 'cancelled')),
  -- Sealed with the platform's key while the import may still connect; null once it has ended.
  password_sealed text,
  -- Units on the volume this import stopped, started again when it ends.
  paused_unit_ids uuid[] not null default '{}',
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  completed_at timestamptz,
  check ((status in ('succeeded', 'failed', 'cancelled')) = (completed_at is not null)),
  check (status not in ('succeeded', 'failed', 'cancelled') or password_sealed is null)
);
create index service_imports_service on service_imports (service_instance_id, created_at desc);
