-- Public reads (document 1, "Assets and public reads") and the shared rate-limit buckets.

create table assets (
  id uuid primary key,
  kind text not null check (kind in (
    'catalog_icon', 'reseller_icon', 'reseller_og_image', 'avatar', 'organization_icon',
    'support_attachment', 'service_config', 'server_backup'
  )),
  content_type text not null,
  bytes bytea not null,
  organization_id uuid,
  created_at timestamptz not null
);

create table public_incidents (
  id uuid primary key,
  title text not null,
  message text,
  started_at timestamptz not null,
  resolved_at timestamptz,
  created_at timestamptz not null
);
create index public_incidents_ongoing on public_incidents (started_at) where resolved_at is null;

create table public_maintenances (
  id uuid primary key,
  title text not null,
  scheduled_at timestamptz not null,
  expected_duration_minutes integer check (expected_duration_minutes >= 0),
  cancelled_at timestamptz,
  created_at timestamptz not null
);
create index public_maintenances_upcoming on public_maintenances (scheduled_at) where cancelled_at is null;

create table client_errors (
  id bigint generated always as identity primary key,
  error_id text not null,
  message text not null check (char_length(message) <= 2000),
  digest text,
  stack text check (char_length(stack) <= 8000),
  url text,
  user_agent text,
  source text not null,
  request_id text not null,
  received_at timestamptz not null
);
create index client_errors_received on client_errors (received_at);

-- hostname null is the platform's own configuration: at most one of those.
create table captcha_configs (
  id uuid primary key,
  hostname text unique check (hostname = lower(hostname)),
  provider text not null,
  site_key text,
  -- The provider's secret is presented to its verify URL, so it cannot be a digest.
  secret text,
  verify_url text,
  enabled boolean not null default true,
  protected_actions text[] not null default '{}',
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create unique index captcha_configs_platform on captcha_configs ((hostname is null)) where hostname is null;

create table resellers (
  id uuid primary key,
  name text not null,
  hostname text not null unique check (hostname = lower(hostname)),
  brand_color text not null,
  custom_plan_selector_enabled boolean not null default false,
  og_image_mode text not null check (og_image_mode in ('platform', 'logo', 'custom', 'disabled')),
  discord_invite_url text,
  icon_asset_id uuid references assets (id) on delete set null,
  og_image_asset_id uuid references assets (id) on delete set null,
  enabled boolean not null default true,
  deleted_at timestamptz,
  created_at timestamptz not null
);

-- Sliding-window counters for every rate limit, so limits hold across API processes.
create table rate_limit_buckets (
  key text primary key,
  window_start timestamptz not null,
  count integer not null,
  prev_count integer not null default 0
);
