-- Server-side secrets and the access-token signing keys (DECISIONS.md §3). Every API process reads
-- them from here, so a pepper is the same everywhere and a token signed by one process verifies in
-- all of them.

-- Peppers and other process-wide random secrets, created once on first use (server-secrets.ts).
-- Rows are never updated: changing a pepper would orphan every digest made with it.
create table server_secrets (
  name text primary key check (name ~ '^[a-z0-9][a-z0-9_.-]{0,63}$'),
  value bytea not null check (octet_length(value) >= 16),
  created_at timestamptz not null default now()
);

-- Ed25519 keys for EdDSA-signed access tokens (RFC 8037). One key signs at a time: the newest whose
-- retire_after has not passed. A retired key keeps verifying until expires_at, which lies one
-- maximum token lifetime past retire_after, so no token it signed outlives it.
-- kid is the RFC 7638 JWK thumbprint of the public key.
-- TODO(key-at-rest): private_jwk is stored in the clear, so read access to this table is the power to
-- mint access tokens; wrapping it with a key from the deployment's configuration waits for the
-- configuration to carry one.
create table signing_keys (
  kid text primary key,
  alg text not null check (alg = 'EdDSA'),
  public_jwk jsonb not null,
  private_jwk jsonb not null,
  created_at timestamptz not null,
  retire_after timestamptz not null,
  expires_at timestamptz not null,
  check (retire_after > created_at),
  check (expires_at >= retire_after)
);
create index signing_keys_current on signing_keys (retire_after desc, created_at desc);
