-- External access and the local edge (document 2 §2 "External access", §4 "External access";
-- DECISIONS.md §6 "Network", "Products, features and limits"; SUBSTRATE.md "The edge").
--
-- Desired state lives here; edge processes (server/src/edge/) converge on it and report what they
-- applied. Every change an edge must act on bumps the one `edge_state.generation` (triggers below) and
-- notifies `edge_state`, so edges listening apply it at once and edges polling find it on their next read.

-- Staff's extra port slots on top of the three every service has (0-20).
alter table service_instances
  add column extra_slots smallint not null default 0 check (extra_slots between 0 and 20);

-- The unit's own loopback address on the local substrate (substrate/local/address.ts): its programs
-- listen there, the edge forwards there. Given at provisioning and kept for the unit's life.
alter table service_resources add column address inet unique;

create table port_allocations (
  id uuid primary key,
  service_instance_id uuid not null references service_instances (id) on delete cascade,
  -- The machine or workload the port forwards to.
  resource_id uuid not null references service_resources (id),
  external_ip inet not null,
  external_port integer not null check (external_port between 1 and 65535),
  internal_port integer not null check (internal_port between 1 and 65535),
  protocol text not null check (protocol in ('tcp', 'udp')),
  is_primary boolean not null default false,
  -- Made by the platform (a VPS's SSH port): the customer cannot release it.
  is_system boolean not null default false,
  network_protection_mode text not null default 'normal' check (network_protection_mode in ('normal')),
  allocated_at timestamptz not null,
  -- One public port is one listener, whatever its protocol.
  unique (external_ip, external_port)
);
create index port_allocations_service on port_allocations (service_instance_id);
-- The duplicate rule (document 2 §4: "duplicate internal port and protocol"), held by the database too.
create unique index port_allocations_internal on port_allocations (service_instance_id, internal_port, protocol);

-- The generation of the edge's desired state.
create table edge_state (
  singleton boolean primary key default true check (singleton),
  generation bigint not null
);
insert into edge_state (singleton, generation) values (true, 1);

-- Edge processes and what each applied. An edge serves the allocations on its `address` (their
-- external_ip); `control_url` answers the live state (GET /state); a row whose heartbeat is older than
-- its stated interval times three is an edge that is gone.
create table edge_nodes (
  id text primary key check (char_length(id) between 1 and 100),
  address inet not null,
  control_url text not null,
  applied_generation bigint not null default 0,
  heartbeat_seconds integer not null check (heartbeat_seconds between 1 and 3600),
  started_at timestamptz not null,
  heartbeat_at timestamptz not null
);

create function bump_edge_state() returns trigger language plpgsql as $$
declare g bigint;
begin
  update edge_state set generation = generation + 1 returning generation into g;
  perform pg_notify('edge_state', g::text);
  return null;
end
$$;

create trigger port_allocations_edge after insert or update or delete on port_allocations
  for each statement execute function bump_edge_state();
-- A unit that goes (ended service) or moves takes its forwarding with it.
create trigger service_resources_edge after update of address, deleted_at on service_resources
  for each statement execute function bump_edge_state();

-- A virtual machine's firewall (document 2 §2 "Firewall rule", §4 "Firewall"). Rules are desired state;
-- the edge enforces ingress rules and records the generation it applied (edge_nodes), which the listing
-- compares with `service_resources.firewall_generation`: the edge generation of the last change.
create table firewall_rules (
  id uuid primary key,
  resource_id uuid not null references service_resources (id) on delete cascade,
  direction text not null check (direction in ('ingress', 'egress')),
  action text not null check (action in ('allow', 'block')),
  protocol text not null check (protocol in ('tcp', 'udp', 'icmp', 'any')),
  priority integer not null check (priority between 0 and 65535),
  enabled boolean not null,
  description text check (description is null or char_length(description) <= 255),
  -- Canonical (host bits zeroed, which the cidr type insists on), no broader than /8.
  cidr cidr check (cidr is null or (family(cidr) = 4 and masklen(cidr) >= 8)),
  port_from integer check (port_from between 1 and 65535),
  port_to integer check (port_to between 1 and 65535),
  created_at timestamptz not null,
  updated_at timestamptz not null,
  check ((protocol in ('tcp', 'udp')) = (port_from is not null and port_to is not null and port_from <= port_to)),
  check (protocol in ('tcp', 'udp') or (port_from is null and port_to is null))
);
create index firewall_rules_resource on firewall_rules (resource_id, direction, priority);

alter table service_resources add column firewall_generation bigint not null default 0;

create trigger firewall_rules_edge after insert or update or delete on firewall_rules
  for each statement execute function bump_edge_state();
