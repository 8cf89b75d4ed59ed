-- Service instances and their resources, shares, durable operations with the service lease, and
-- idempotency keys (document 2 §1, §2 "Resource list entries", §4 "Resources", "VPS reinstall";
-- DECISIONS.md §4 "Service instances", shares, Idempotency-Key; SUBSTRATE.md "Durable operations").

-- The subscription's product is a catalog product (0006 left it unreferenced: no catalog then).
alter table subscriptions
  add constraint subscriptions_product foreign key (product_id) references catalog_products (id);

create table service_instances (
  id uuid primary key,
  project_id uuid not null references projects (id),
  subscription_id uuid not null unique references subscriptions (id),
  product_id uuid not null references catalog_products (id),
  name text not null check (char_length(name) between 1 and 100),
  slug text not null check (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and char_length(slug) <= 60),
  status text not null check (status in ('provisioning', 'active', 'suspended', 'ended', 'failed')),
  created_at timestamptz not null,
  updated_at timestamptz not null,
  unique (project_id, slug)
);
create index service_instances_project on service_instances (project_id, created_at desc);

create table service_resources (
  id uuid primary key,
  service_instance_id uuid not null references service_instances (id) on delete cascade,
  kind text not null check (kind in ('virtual_machine', 'volume', 'workload')),
  role text not null check (role in ('primary', 'storage')),
  status text not null check (status in ('provisioning', 'running', 'stopped', 'reinstalling', 'failed')),
  hidden boolean not null default false,
  -- The installed image of a virtual machine.
  os_image text check (os_image is null or kind = 'virtual_machine'),
  -- The volume a machine or workload runs on.
  volume_id uuid references service_resources (id),
  size_gb integer check (size_gb is null or size_gb >= 1),
  -- The unit contract (UnitSignal) of a machine or workload: its key, the generation the platform
  -- last wrote, and the one the unit's agent last acknowledged (read back from the substrate).
  unit_key text check (unit_key is null or unit_key ~ '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$'),
  public_endpoints jsonb not null default '[]',
  signal_generation bigint not null default 0 check (signal_generation >= 0),
  observed_generation bigint,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  deleted_at timestamptz
);
create index service_resources_instance on service_resources (service_instance_id) where deleted_at is null;

-- Per-service shares: the holder may list the instance's resources and nothing more.
create table service_shares (
  service_instance_id uuid not null references service_instances (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null,
  primary key (service_instance_id, user_id)
);
create index service_shares_user on service_shares (user_id);

create table service_operations (
  id uuid primary key,
  service_instance_id uuid not null references service_instances (id) on delete cascade,
  resource_id uuid references service_resources (id),
  -- Backups, restores, deployments and imports arrive with their features; the lease already knows them.
  kind text not null check (kind in ('provision', 'reinstall', 'backup', 'restore', 'deployment', 'import')),
  status text not null check (status in ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
  phase text,
  progress_percent smallint check (progress_percent between 0 and 100),
  error text,
  -- What the operation was asked (the reinstall's image): its job reads it, never the request.
  input jsonb not null default '{}',
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  started_at timestamptz,
  completed_at timestamptz,
  check ((status in ('succeeded', 'failed', 'cancelled')) = (completed_at is not null))
);
create index service_operations_instance on service_operations (service_instance_id, created_at);
-- Operations waiting for the lease, oldest first (the hand-over reads it).
create index service_operations_waiting on service_operations (service_instance_id, created_at)
  where status = 'queued';

-- The service lease: at most one operation holds a service. Taken in the transaction that creates the
-- operation (or handed over in the one that finishes the holder), so two API processes cannot both
-- start one.
create table service_leases (
  service_instance_id uuid primary key references service_instances (id) on delete cascade,
  operation_id uuid not null unique references service_operations (id) on delete cascade,
  acquired_at timestamptz not null
);

-- Idempotency-Key (DECISIONS.md §4): the first answer to a key, per caller, for 24 hours. The row is
-- written in the transaction that does the work, so a concurrent retry waits on the key's unique
-- index and then reads the answer; a request that failed leaves no row.
create table idempotency_keys (
  caller text not null,
  key text not null,
  -- sha-256 of the operation and the request body: the same key with another body is refused.
  request_digest bytea not null,
  status smallint not null,
  -- json, not jsonb: the stored answer is replayed with its keys in the order first sent.
  body json not null,
  created_at timestamptz not null,
  primary key (caller, key)
);
create index idempotency_keys_created on idempotency_keys (created_at);
