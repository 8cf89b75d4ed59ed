-- Organizations, members, projects, subscriptions, wallets and the audit log (document 1:
-- "Organization", "Membership", "Project", "Project stats", "Organization standing", "Audit entry").

create table organizations (
  id uuid primary key,
  name text not null check (char_length(name) between 1 and 100),
  -- Unique platform-wide (seed "Organization").
  slug text not null unique check (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and char_length(slug) between 2 and 48),
  -- The account's own organization: it keeps its name and slug, takes no members, cannot be deleted.
  personal_owner_id uuid unique references users (id) on delete cascade,
  billing_country_code text check (billing_country_code ~ '^[A-Z]{2}$'),
  icon_asset_id uuid references assets (id) on delete set null,
  created_at timestamptz not null,
  updated_at timestamptz not null
);

create table organization_members (
  organization_id uuid not null references organizations (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  role text not null check (role in ('owner', 'admin', 'billing', 'member')),
  created_at timestamptz not null,
  primary key (organization_id, user_id)
);
create index organization_members_user on organization_members (user_id);

create table projects (
  id uuid primary key,
  organization_id uuid not null references organizations (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 100),
  slug text not null check (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and char_length(slug) between 2 and 48),
  description text check (char_length(description) <= 1000),
  -- The `games` project of a personal organization, which the platform manages.
  managed boolean not null default false,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  unique (organization_id, slug)
);

-- What a project is charged for. Document 2 builds service instances on it.
create table subscriptions (
  id uuid primary key,
  project_id uuid not null references projects (id),
  product_id uuid not null,
  status text not null check (status in ('active', 'suspended', 'ended')),
  price numeric(12, 2) not null check (price >= 0),
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  -- The service window now being charged: [window_start, window_end).
  window_start timestamptz,
  window_end timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  deleted_at timestamptz,
  check (window_end is null or window_start is null or window_end > window_start)
);
create index subscriptions_project_live on subscriptions (project_id) where deleted_at is null;

-- One wallet per organization; staff set it (DECISIONS.md §4, the wallet admin route). EUR.
create table organization_wallets (
  organization_id uuid primary key references organizations (id) on delete cascade,
  balance numeric(14, 2) not null default 0,
  reservations numeric(14, 2) not null default 0 check (reservations >= 0),
  floor numeric(14, 2) not null default 0,
  credit_limit numeric(14, 2) not null default 0 check (credit_limit >= 0),
  open_receivables numeric(14, 2) not null default 0 check (open_receivables >= 0),
  updated_at timestamptz not null
);

-- Every organization-scoped write, recorded in the transaction of the write itself.
create table audit_entries (
  id uuid primary key,
  -- Insertion order: entries of one instant (or one transaction) still list most recent first.
  seq bigint generated always as identity unique,
  organization_id uuid not null references organizations (id) on delete cascade,
  actor_user_id uuid,
  actor_token_id uuid,
  actor_application_id uuid,
  acting_as_user_id uuid,
  action text not null check (action ~ '^[a-z_]+\.[a-z_]+$'),
  target_type text not null,
  target_id text,
  project_id uuid,
  service_instance_id uuid,
  request_id text,
  created_at timestamptz not null
);
create index audit_entries_org_time on audit_entries (organization_id, created_at desc, seq desc);
create index audit_entries_org_action on audit_entries (organization_id, action, created_at desc, seq desc);

-- Platform-internal events live in their own table, so the organization audit list cannot show them
-- by construction (seed "Audit and domains").
create table platform_events (
  id uuid primary key,
  organization_id uuid,
  action text not null,
  target_type text,
  target_id text,
  details jsonb,
  request_id text,
  created_at timestamptz not null
);

-- Every existing account gets its personal organization and its managed games project.
insert into organizations (id, name, slug, personal_owner_id, created_at, updated_at)
select gen_random_uuid(), left(u.name, 100), 'u-' || substr(md5(u.id::text), 1, 12), u.id, now(), now()
from users u where not exists (select 1 from organizations o where o.personal_owner_id = u.id);
insert into organization_members (organization_id, user_id, role, created_at)
select o.id, o.personal_owner_id, 'owner', o.created_at from organizations o
where o.personal_owner_id is not null
  and not exists (select 1 from organization_members m where m.organization_id = o.id and m.user_id = o.personal_owner_id);
insert into projects (id, organization_id, name, slug, managed, created_at, updated_at)
select gen_random_uuid(), o.id, 'Games', 'games', true, o.created_at, o.created_at from organizations o
where o.personal_owner_id is not null
  and not exists (select 1 from projects p where p.organization_id = o.id and p.slug = 'games');
