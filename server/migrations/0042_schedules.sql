-- Schedules of a service (DECISIONS.md §8 "Schedules"): a cron in an IANA time zone that starts an
-- action. `next_run_at` is what the claim reads: a due row is claimed by moving it forward under
-- `for update skip locked`, so one run happens however many workers look at once.
create table service_schedules (
  id uuid primary key,
  service_instance_id uuid not null references service_instances (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 100),
  cron text not null,
  timezone text not null,
  action text not null check (action in ('backup', 'start', 'stop', 'restart', 'command')),
  command text check (char_length(command) between 1 and 1000),
  keep integer check (keep >= 1),
  enabled boolean not null,
  -- Null while disabled: nothing to claim.
  next_run_at timestamptz,
  last_run_at timestamptz,
  -- Null before the first run; a run that started an operation takes its outcome from that operation.
  last_status text check (last_status in ('succeeded', 'failed', 'skipped')),
  last_error text,
  last_operation_id uuid references service_operations (id) on delete set null,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  check ((action = 'command') = (command is not null)),
  check ((action = 'backup') = (keep is not null)),
  check (enabled = (next_run_at is not null))
);
create index service_schedules_service on service_schedules (service_instance_id, created_at);
create index service_schedules_due on service_schedules (next_run_at) where next_run_at is not null;

-- Rotation deletes only the schedule's own backups; a deleted schedule leaves its backups to the customer.
alter table service_backups add column schedule_id uuid references service_schedules (id) on delete set null;
create index service_backups_schedule on service_backups (schedule_id, created_at desc)
  where schedule_id is not null and deleted_at is null;
