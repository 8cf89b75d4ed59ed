-- Background work moves onto one durable queue (graphile-worker, installed by the migration step
-- before this file: server/src/jobs/schema.ts). What the queue's periodic pruning jobs need
-- (server/src/jobs/prune.ts), and the mail outbox without its own sender.

-- A rate-limit bucket stops mattering once its window and the one after it are over (the sliding
-- estimate reads the previous window). The window's length is the limit's, which only the code
-- knows, so every hit writes when its bucket expires. Rows from before this column: every window in
-- use lasts at most an hour, so a day is past any of them.
alter table rate_limit_buckets add column expires_at timestamptz;
update rate_limit_buckets set expires_at = window_start + interval '1 day';
alter table rate_limit_buckets alter column expires_at set not null;
create index rate_limit_buckets_expires on rate_limit_buckets (expires_at);

-- Login challenges are pruned a while after they expire (consumed or burnt ones expire too).
create index login_challenges_expires on login_challenges (expires_at);

-- A sender no longer leases rows: each mail is one job (send_mail, job key `mail:<id>`), and the
-- queue's lock on that job is what keeps two workers from delivering it at once. A worker that dies
-- mid-delivery loses its lock with its connection (server/src/jobs/liveness.ts), not after a lease.
alter table mail_outbox drop column locked_until;

-- Finished mail (sent or given up; bodies already erased) is deleted after its retention period.
create index mail_outbox_finished on mail_outbox ((coalesce(sent_at, given_up_at)))
  where sent_at is not null or given_up_at is not null;

-- Mail queued before the queue existed: one job each, as enqueueMail makes them.
select graphile_worker.add_job(
  'send_mail',
  json_build_object('id', id),
  job_key => 'mail:' || id::text,
  max_attempts => 10
)
from mail_outbox
where sent_at is null and given_up_at is null;
