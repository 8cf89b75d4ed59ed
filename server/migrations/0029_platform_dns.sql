-- The platform's own authoritative DNS (DECISIONS.md §6 "DNS and domains"; issue 23): staff's parent
-- domains and the game subdomains under them. The DNS server (server/src/dns-server/) answers from these
-- rows and from the services' platform names; every change it must serve bumps `dns_state.generation`
-- and notifies `dns_state`, so a listening server reloads at once and a polling one within its poll.

-- Zones staff register for game subdomains. A parent domain is a zone of its own: no parent domain lies
-- under another, or under PLATFORM_DOMAIN (checked by the route, which knows PLATFORM_DOMAIN).
create table parent_domains (
  id uuid primary key,
  name text not null unique check (char_length(name) between 3 and 253 and name = lower(name)),
  created_at timestamptz not null
);

-- The embedded default's zone (fixed id, `on conflict do nothing` like the catalog: staff may remove it).
insert into parent_domains (id, name, created_at)
values ('5c0a7a10-0000-4000-8000-0000000000d1', 'play.test', now())
on conflict do nothing;

-- A service's game subdomain (document 2 §2 "Game subdomain"). The unique name is the one claim on
-- `<subdomain>.<parent>`, so two creations racing for a name cannot both win; one row per service is
-- the limit of 1, held by the database too. `record_ip`/`record_port` are what the DNS publishes (the
-- primary allocation when the records were made); a row without them waits for the job that makes them.
create table game_subdomains (
  id uuid primary key,
  service_instance_id uuid not null references service_instances (id) on delete cascade,
  parent_domain_id uuid not null references parent_domains (id),
  subdomain text not null check (subdomain ~ '^[a-z0-9]([a-z0-9-]{1,30})[a-z0-9]$'),
  status text not null check (status in ('pending', 'active', 'failed')),
  record_ip inet,
  record_port integer check (record_port between 1 and 65535),
  has_srv_record boolean not null default false,
  last_error text,
  -- Failed attempts to publish since the last success: the retry's backoff grows with it.
  attempts integer not null default 0,
  last_synced_at timestamptz,
  created_at timestamptz not null,
  check ((status = 'active') = (record_ip is not null and record_port is not null)),
  unique (parent_domain_id, subdomain)
);
create unique index game_subdomains_one_per_service on game_subdomains (service_instance_id);

create table dns_state (
  singleton boolean primary key default true check (singleton),
  generation bigint not null
);
insert into dns_state (singleton, generation) values (true, 1);

create function bump_dns_state() returns trigger language plpgsql as $$
declare g bigint;
begin
  update dns_state set generation = generation + 1 returning generation into g;
  perform pg_notify('dns_state', g::text);
  return null;
end
$$;

create trigger parent_domains_dns after insert or update or delete on parent_domains
  for each statement execute function bump_dns_state();
create trigger game_subdomains_dns after insert or update or delete on game_subdomains
  for each statement execute function bump_dns_state();
-- Platform names: a service's A record follows its primary allocation, its slug and its life.
create trigger port_allocations_dns after insert or update or delete on port_allocations
  for each statement execute function bump_dns_state();
create trigger service_instances_dns after insert or update of slug, status or delete on service_instances
  for each statement execute function bump_dns_state();
-- An ended subscription takes its service's platform name with it.
create trigger subscriptions_dns after update of status on subscriptions
  for each statement execute function bump_dns_state();
