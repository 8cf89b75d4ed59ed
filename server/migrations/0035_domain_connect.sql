-- Domain Connect links (document 2 §2 "Domain connect link", §3, §4 "Domain connect"; DECISIONS.md §6
-- "DNS and domains"; issue 23). A link records that a customer was sent to their DNS provider to publish
-- `SRV _minecraft._tcp.<host>.<domain>` → `srv_target:srv_port`; the platform never writes their DNS and
-- verify reads it back. At most 20 per service (counted under the service row's lock); one per
-- (service, domain, host), held by the unique index too.
create table domain_connect_links (
  id uuid primary key,
  service_instance_id uuid not null references service_instances (id) on delete cascade,
  domain text not null check (char_length(domain) between 3 and 253 and domain = lower(domain)),
  -- '' for the apex.
  host text not null check (host = '' or host ~ '^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$'),
  status text not null check (status in ('pending', 'active', 'failed')),
  srv_target text not null,
  srv_port integer not null check (srv_port between 1 and 65535),
  apply_url text,
  dns_provider_id text,
  dns_provider_display_name text,
  template_confirmed boolean,
  last_error text,
  last_verified_at timestamptz,
  created_at timestamptz not null,
  unique (service_instance_id, domain, host)
);
create index domain_connect_links_service on domain_connect_links (service_instance_id, created_at);

-- The block game offers Domain Connect (SUBSTRATE.md's catalog); the web app does not (it has no SRV
-- record to publish). Only these two fixed rows are corrected, and only in what this changes.
update catalog_products set features = array_append(features, 'domain_connect')
where id = '5c0a7a10-0000-4000-8000-000000000002' and not ('domain_connect' = any (features));
update catalog_products set features = array_remove(features, 'domain_connect')
where id = '5c0a7a10-0000-4000-8000-000000000004';
