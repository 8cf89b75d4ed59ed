-- A game service's RCON password (DECISIONS.md §6 "Games"): made once, the first time the service's
-- workload starts, sealed with the platform's key, and given to nobody but the workload (its
-- environment) and the platform's own RCON client. Made by one conditional insert, so two starts racing
-- agree on one password.
create table game_rcon_credentials (
  service_instance_id uuid primary key references service_instances (id) on delete cascade,
  password_sealed text not null,
  created_at timestamptz not null
);
