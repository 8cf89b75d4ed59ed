-- Personal API tokens, applications, delegations and linked provider accounts (document 1,
-- "Personal API tokens and delegations", "Application reads"; DECISIONS.md §3).

-- svc_pat_{id}_{secret}: only the HMAC-SHA-256 of the whole credential under the server pepper is kept.
create table api_tokens (
  id uuid primary key,
  user_id uuid not null references users (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 64),
  secret_digest bytea not null,
  -- {"grants": [{"capability", "scope": {"kind", "id"?}}]}; null is a legacy unrestricted token.
  grants jsonb,
  admin_authorized boolean not null default false,
  created_at timestamptz not null,
  expires_at timestamptz,
  -- Written at most once a minute per token (authz/credentials.ts).
  last_used_at timestamptz,
  revoked_at timestamptz
);
create index api_tokens_user_live on api_tokens (user_id, created_at desc) where revoked_at is null;

create table applications (
  id uuid primary key,
  name text not null check (char_length(name) between 1 and 64),
  capabilities text[] not null,
  -- svc_app_{id}_{secret}, kept as for API tokens; rotating replaces it.
  token_digest bytea not null,
  token_rotated_at timestamptz not null,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null
);

-- At most one per application and user; a second grant replaces the scope and revives a revoked one.
create table application_delegations (
  id uuid primary key,
  application_id uuid not null references applications (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  capabilities text[] not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  last_used_at timestamptz,
  revoked_at timestamptz,
  unique (application_id, user_id)
);
create index application_delegations_user on application_delegations (user_id, created_at desc);

-- A provider identity linked to an account (the OAuth issue links them; applications look them up).
create table oauth_accounts (
  id uuid primary key,
  user_id uuid not null references users (id) on delete cascade,
  provider_id text not null,
  provider_user_id text not null,
  email text,
  created_at timestamptz not null,
  last_used_at timestamptz,
  unique (provider_id, provider_user_id)
);
create index oauth_accounts_user on oauth_accounts (user_id);
