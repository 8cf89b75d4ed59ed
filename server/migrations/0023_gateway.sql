-- The edge gateway (DECISIONS.md §6 "The edge gateway"; SUBSTRATE.md "The edge gateway"): the keys that
-- sign its tickets, the tickets themselves (spent at first redemption), the gateways that run, and
-- the built-in program each product's workload runs.

-- Ed25519 keys signing gateway tickets: the same life as the access-token keys (signing_keys), in a
-- table of their own so that a ticket can never pass for an access token nor the reverse.
create table ticket_signing_keys (
  kid text primary key,
  alg text not null check (alg = 'EdDSA'),
  public_jwk jsonb not null,
  private_jwk jsonb,
  private_jwk_sealed text,
  created_at timestamptz not null,
  retire_after timestamptz not null,
  expires_at timestamptz not null,
  check (retire_after > created_at),
  check (expires_at >= retire_after),
  check (private_jwk_sealed is not null)
);
create index ticket_signing_keys_current on ticket_signing_keys (retire_after desc, created_at desc);

-- One row per ticket handed out: its purpose and resource (also signed into the ticket), who asked and
-- with which credential (so the gateway can end a socket whose access ended), and its redemption.
-- redeemed_at is set by one conditional update: two gateways cannot both accept a ticket.
create table gateway_tickets (
  id uuid primary key,
  purpose text not null check (purpose in ('console', 'shell', 'screen')),
  service_instance_id uuid not null references service_instances (id) on delete cascade,
  resource_id uuid not null references service_resources (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  session_id uuid,
  token_id uuid,
  delegation_id uuid,
  -- What the purpose needs: the shell's container and shells, the screen's session id.
  details jsonb not null default '{}',
  created_at timestamptz not null,
  expires_at timestamptz not null,
  redeemed_at timestamptz,
  redeemed_by uuid
);
create index gateway_tickets_expires on gateway_tickets (expires_at);

-- Gateways that run: each writes its row at start and a heartbeat every few seconds; /readyz reads them.
create table gateway_instances (
  id uuid primary key,
  url text not null,
  pid integer not null,
  started_at timestamptz not null,
  heartbeat_at timestamptz not null
);

-- The built-in program a product's workload runs (server/src/workloads/<program>.ts); null: none (a VPS
-- runs a machine, not a workload program). A real game server binary replaces one by changing this.
alter table catalog_products add column workload_program text
  check (workload_program is null or workload_program ~ '^[a-z0-9]+(-[a-z0-9]+)*$');
update catalog_products set workload_program = 'block-game' where id = '5c0a7a10-0000-4000-8000-000000000002';
update catalog_products set workload_program = 'arena-game' where id = '5c0a7a10-0000-4000-8000-000000000003';
update catalog_products set workload_program = 'web-app' where id = '5c0a7a10-0000-4000-8000-000000000004';
