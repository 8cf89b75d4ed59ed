-- Sign-in with external OpenID providers and linked identities (document 1, "OAuth", "Linked OAuth
-- account"; DECISIONS.md §4 OAuth, §5 OAUTH_PROVIDERS).

-- An identity is the provider's issuer and subject, never the email. Rows written before this
-- migration (or by the application-read tests) may lack the issuer; every row this issue writes has it.
alter table oauth_accounts add column issuer text;
create unique index oauth_accounts_identity on oauth_accounts (issuer, provider_user_id) where issuer is not null;
-- One identity per provider per account: DELETE /auth/oauth/accounts/{provider} names it by provider.
create unique index oauth_accounts_user_provider on oauth_accounts (user_id, provider_id);
-- The provider's picture as last fetched (a 512x512 WebP through the image pipeline), and the URL it
-- came from, so a sign-in fetches it again only when the provider names another one. No provider
-- access or refresh token is kept.
alter table oauth_accounts add column picture_url text;
alter table oauth_accounts add column picture_asset_id uuid references assets (id) on delete set null;

-- Set only when an OAuth callback creates the account (document 1: "referral_code is attributed only
-- when the callback creates a new account"); reseller_id attributes the account to a reseller.
alter table users add column referral_code text check (char_length(referral_code) <= 64);
alter table users add column reseller_id uuid references resellers (id) on delete set null;

-- One browser flow from start to callback. The state is kept as its SHA-256 only; the PKCE verifier
-- and the nonce, needed again at the callback, are sealed (purpose oauth-flow). Single use
-- (used_at), 10 minutes. A link flow is bound to the user and the session that started it.
create table oauth_flows (
  id uuid primary key,
  state_digest bytea not null unique,
  provider_id text not null,
  purpose text not null check (purpose in ('sign_in', 'link')),
  user_id uuid references users (id) on delete cascade,
  session_id uuid references sessions (id) on delete cascade,
  redirect_to text not null,
  secrets_sealed text not null,
  referral_code text check (char_length(referral_code) <= 64),
  reseller_id uuid,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  check ((purpose = 'link') = (user_id is not null and session_id is not null))
);
create index oauth_flows_expires on oauth_flows (expires_at);

-- The completion key the callback hands the browser, redeemed once for a session within 2 minutes;
-- only its SHA-256 is kept.
create table oauth_completions (
  id uuid primary key,
  key_digest bytea not null unique,
  user_id uuid not null references users (id) on delete cascade,
  provider_id text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz
);
create index oauth_completions_expires on oauth_completions (expires_at);
