-- Issue 33 item 8: a unit that stopped without being asked (its agent or program died, its host lost it)
-- and that the converge started again is counted, with why and when, on its resource.
alter table service_resources
  add column restart_count integer not null default 0 check (restart_count >= 0),
  add column last_exit_reason text,
  add column last_exited_at timestamptz;
