-- Accounts, password sign-in with emailed codes, and sessions with rotating refresh tokens
-- (document 1: "Session", "Refresh token", "Sign-in and sessions"; DECISIONS.md §3).

create table users (
  id uuid primary key,
  -- Stored lowercase: addresses compare case-insensitively.
  email text unique check (email = lower(email)),
  email_verified_at timestamptz,
  password_hash text,
  name text not null,
  language text not null default 'en',
  is_onboarded boolean not null default false,
  chat_notifications_enabled boolean not null default false,
  billing_country_code text,
  avatar_asset_id uuid,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  deleted_at timestamptz
);

-- A login challenge exists only after a correct password; the code is kept as a digest.
create table login_challenges (
  id uuid primary key,
  user_id uuid not null references users (id) on delete cascade,
  code_digest bytea not null,
  attempts integer not null default 0,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  consumed_at timestamptz,
  ip text,
  user_agent text
);
create index login_challenges_user on login_challenges (user_id);

-- A session is a refresh-token family (RFC 9700 §4.14.2): revoking it ends every pair at once.
create table sessions (
  id uuid primary key,
  user_id uuid not null references users (id) on delete cascade,
  created_at timestamptz not null,
  last_used_at timestamptz not null,
  absolute_expires_at timestamptz not null,
  idle_expires_at timestamptz not null,
  user_agent text,
  ip text,
  revoked_at timestamptz,
  revoked_reason text
);
create index sessions_user_live on sessions (user_id) where revoked_at is null;

create table refresh_tokens (
  id uuid primary key,
  session_id uuid not null references sessions (id) on delete cascade,
  token_digest bytea not null unique,
  created_at timestamptz not null,
  spent_at timestamptz,
  -- Set when spent: the successor's digest, so a retry within the grace window finds it.
  successor_digest bytea
);
create index refresh_tokens_session on refresh_tokens (session_id);

-- Emailed single-use tokens (address verification, password reset), stored as digests.
create table email_tokens (
  id uuid primary key,
  user_id uuid not null references users (id) on delete cascade,
  purpose text not null check (purpose in ('verify_email', 'password_reset')),
  token_digest bytea not null unique,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz
);
create index email_tokens_user on email_tokens (user_id, purpose);
