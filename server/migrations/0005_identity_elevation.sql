-- Identity and elevation (document 1: "Caller identity", "Discovery ledger", "Elevation status",
-- "Elevation of a session", "Identity", "Elevation"; DECISIONS.md §3).

-- Staff are users with a non-empty list (DECISIONS.md §3 "System permissions").
alter table users add column system_permissions text[] not null default '{}';
-- 'uploaded' once the person uploaded an avatar, so an automatic provider sync never replaces it;
-- a provider id when the avatar came from that provider; null when there is none.
alter table users add column avatar_source text;

-- Assets are immutable: a strong ETag of their bytes, made once.
alter table assets add column etag text;
update assets set etag = '"' || encode(sha256(bytes), 'hex') || '"' where etag is null;
alter table assets alter column etag set not null;

-- Secrets kept for later use are sealed with ENCRYPTION_KEY (AES-256-GCM, DECISIONS.md §3). Rows
-- written before this migration hold them in the clear; the server seals those at start-up
-- (secrets/seal-legacy.ts) and clears the plaintext column.
alter table signing_keys add column private_jwk_sealed text;
alter table signing_keys alter column private_jwk drop not null;
alter table signing_keys add constraint signing_keys_private_present
  check (private_jwk is not null or private_jwk_sealed is not null);
alter table captcha_configs add column secret_sealed text;

-- The discovery ledger: key → first sighting. Re-marking keeps the first time.
create table discovery_seen (
  user_id uuid not null references users (id) on delete cascade,
  key text not null check (char_length(key) <= 96),
  first_seen_at timestamptz not null,
  primary key (user_id, key)
);

-- One row per user who ever set up a method or failed an attempt.
create table elevation_factors (
  user_id uuid primary key references users (id) on delete cascade,
  pin_hash text,
  -- Set by the absolute failure cap (NIST SP 800-63B §5.2.2); cleared by the next sign-in.
  pin_locked_at timestamptz,
  totp_secret_sealed text,
  totp_enrolled_at timestamptz,
  -- The last accepted RFC 6238 time step: a code is accepted once only, decided by one
  -- compare-and-set statement (step > totp_last_step).
  totp_last_step bigint,
  -- Consecutive failed attempts across methods, for the absolute cap.
  consecutive_failures integer not null default 0 check (consecutive_failures >= 0),
  updated_at timestamptz not null
);

-- A pending TOTP secret lives 5 minutes; a new enroll-options replaces it.
create table totp_pending (
  user_id uuid primary key references users (id) on delete cascade,
  secret_sealed text not null,
  expires_at timestamptz not null
);

create table webauthn_credentials (
  id uuid primary key,
  user_id uuid not null references users (id) on delete cascade,
  -- The authenticator's credential id (base64url), unique platform-wide.
  credential_id text not null unique,
  public_key bytea not null,
  sign_count bigint not null default 0 check (sign_count >= 0),
  transports text[] not null default '{}',
  device_type text,
  backed_up boolean not null default false,
  created_at timestamptz not null,
  last_used_at timestamptz
);
create index webauthn_credentials_user on webauthn_credentials (user_id);

-- Server-side WebAuthn challenges: single use (deleted when redeemed), 5 minutes.
create table webauthn_challenges (
  id uuid primary key,
  user_id uuid not null references users (id) on delete cascade,
  purpose text not null check (purpose in ('register', 'authenticate')),
  challenge text not null unique,
  expires_at timestamptz not null,
  created_at timestamptz not null
);
create index webauthn_challenges_user on webauthn_challenges (user_id, purpose);
