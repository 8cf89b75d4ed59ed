-- A machine or workload whose substrate host (an LXD cluster member) does not answer: neither running nor
-- stopped as far as anyone can tell, and not started elsewhere (converge.ts).
alter table service_resources drop constraint service_resources_status_check;
alter table service_resources add constraint service_resources_status_check
  check (status in ('provisioning', 'running', 'stopped', 'reinstalling', 'failed', 'unreachable'));
