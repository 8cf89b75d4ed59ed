-- The catalog: products on sale with their plans, features and monthly fees, and the operating-system
-- images of VPS products (DECISIONS.md §4 "Catalog"; SUBSTRATE.md "The catalog the embedded default
-- ships"). Anyone may read it (GET /catalog/...). Money is numeric(10, 2) in EUR, read as its text.
create table catalog_products (
  id uuid primary key,
  slug text not null unique check (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$'),
  name text not null check (char_length(name) between 1 and 200),
  kind text not null check (kind in ('vps', 'block_game', 'arena_game', 'web_app')),
  cpu integer not null check (cpu >= 1),
  memory_mb integer not null check (memory_mb >= 1),
  storage_gb integer not null check (storage_gb >= 1),
  -- Names from DECISIONS.md §4, without repeats; order kept as stored.
  features text[] not null check (
    features <@ array[
      'reinstall', 'backups', 'files', 'console', 'shell', 'screen', 'firewall', 'external_access',
      'custom_domains', 'domain_connect', 'game_subdomain', 'sftp', 'imports', 'roster', 'live_info'
    ]::text[]
  ),
  monthly_fee numeric(10, 2) not null check (monthly_fee >= 0)
);

-- An image belongs to one product (a reinstall picks from "the product's operating systems").
create table catalog_operating_systems (
  product_id uuid not null references catalog_products (id) on delete cascade,
  id text not null check (id ~ '^[a-z0-9]+([.-][a-z0-9]+)*$'),
  name text not null check (char_length(name) between 1 and 200),
  enabled boolean not null,
  min_cpu integer not null check (min_cpu >= 1),
  min_memory_mb integer not null check (min_memory_mb >= 1),
  min_storage_gb integer not null check (min_storage_gb >= 1),
  monthly_fee numeric(10, 2) not null check (monthly_fee >= 0),
  primary key (product_id, id)
);

-- The embedded default catalog. Fixed ids, and `on conflict do nothing`: running this again changes
-- nothing, and never undoes what staff changed since.
insert into catalog_products (id, slug, name, kind, cpu, memory_mb, storage_gb, features, monthly_fee) values
  ('5c0a7a10-0000-4000-8000-000000000001', 'vps-small', 'VPS Small', 'vps', 1, 2048, 40,
   array['reinstall', 'screen', 'shell', 'firewall', 'backups', 'external_access'], 6.50),
  ('5c0a7a10-0000-4000-8000-000000000002', 'block-game', 'Block Game Server', 'block_game', 2, 4096, 20,
   array['roster', 'console', 'shell', 'files', 'backups', 'external_access', 'game_subdomain', 'sftp', 'imports'], 8.00),
  ('5c0a7a10-0000-4000-8000-000000000003', 'arena-game', 'Arena Game Server', 'arena_game', 1, 1024, 10,
   array['live_info', 'console', 'files', 'external_access'], 4.00),
  ('5c0a7a10-0000-4000-8000-000000000004', 'web-app', 'Web App', 'web_app', 1, 1024, 10,
   array['files', 'shell', 'custom_domains', 'domain_connect', 'sftp', 'imports', 'backups'], 5.00)
on conflict (id) do nothing;

-- The VPS plan (1 CPU, 2048 MiB, 40 GiB) meets debian-12, ubuntu-24.04 and rocky-9 at 0.00; debian-11
-- is disabled; ubuntu-24.04-desktop needs 60 GiB of storage; windows-server-2022 costs 15.00 a month.
insert into catalog_operating_systems
  (product_id, id, name, enabled, min_cpu, min_memory_mb, min_storage_gb, monthly_fee) values
  ('5c0a7a10-0000-4000-8000-000000000001', 'debian-12', 'Debian 12 (Bookworm)', true, 1, 512, 10, 0.00),
  ('5c0a7a10-0000-4000-8000-000000000001', 'ubuntu-24.04', 'Ubuntu 24.04 LTS', true, 1, 1024, 15, 0.00),
  ('5c0a7a10-0000-4000-8000-000000000001', 'rocky-9', 'Rocky Linux 9', true, 1, 1024, 20, 0.00),
  ('5c0a7a10-0000-4000-8000-000000000001', 'debian-11', 'Debian 11 (Bullseye)', false, 1, 512, 10, 0.00),
  ('5c0a7a10-0000-4000-8000-000000000001', 'ubuntu-24.04-desktop', 'Ubuntu 24.04 LTS Desktop', true, 1, 2048, 60, 0.00),
  ('5c0a7a10-0000-4000-8000-000000000001', 'windows-server-2022', 'Windows Server 2022', true, 1, 2048, 32, 15.00)
on conflict (product_id, id) do nothing;
