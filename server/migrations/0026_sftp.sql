-- SFTP accounts (document 2 §2 "SFTP account", §4 "SFTP"; DECISIONS.md §6 "SFTP"): one per service,
-- made by its first `PATCH /sftp {enabled: true}` or `POST /sftp/rotate`. The password is only ever
-- compared, so only its argon2id digest is kept; null until the first rotate (no one signs in then).
-- `generation` moves on every change that must end open sessions (disable, rotate): a gateway ends a
-- session whose account no longer reads enabled at the generation it signed in with.
create table sftp_accounts (
  service_instance_id uuid primary key references service_instances (id) on delete cascade,
  username text not null unique check (username ~ '^[a-z0-9][a-z0-9.-]{2,63}$'),
  enabled boolean not null,
  password_digest text,
  generation bigint not null default 1 check (generation >= 1),
  created_at timestamptz not null,
  updated_at timestamptz not null
);

-- The SSH host key every gateway presents (so a client's known_hosts holds across gateways and
-- restarts): one row, made by whoever needs it first (`on conflict do nothing`), the private half
-- sealed under ENCRYPTION_KEY.
create table sftp_host_keys (
  id smallint primary key check (id = 1),
  private_key_sealed text not null,
  fingerprint text not null,
  created_at timestamptz not null
);
