-- Names the edge's HTTP ingress serves (DECISIONS.md §6 "DNS and domains"; document 2 §4 "Custom domains",
-- "External access": the HTTP domain of an allocation; issues 21 and 23), their certificates, and the
-- ACME challenges the ingress answers while a certificate is issued.
--
-- A name is held by one service at a time: `http_names.hostname` is unique over both kinds, so a custom
-- domain and an HTTP domain cannot both claim one name, and two attaches racing for it cannot both win.
-- The claim is the row; detaching or removing deletes it, which releases the name.

create table http_names (
  id uuid primary key,
  hostname text not null unique check (char_length(hostname) between 1 and 253 and hostname = lower(hostname)),
  service_instance_id uuid not null references service_instances (id) on delete cascade,
  -- The organization that held the name when it was attached (the three-way authorization's answer).
  organization_id uuid not null references organizations (id),
  kind text not null check (kind in ('custom_domain', 'http_domain')),
  -- The HTTP domain's allocation (its unit and internal port are where the ingress sends requests).
  allocation_id uuid references port_allocations (id) on delete cascade,
  -- pending: waiting for the name to resolve to the ingress and for its certificate; active: served
  -- with its certificate; failed: the certificate was refused for good (`status_reason` says why).
  status text not null check (status in ('pending', 'active', 'failed')),
  -- Why a pending name waits (the preflight's finding) or why it failed; null when active.
  status_reason text check (char_length(status_reason) <= 500),
  -- Issuance attempts since the last success, and when the next one is due (backoff).
  attempts integer not null default 0,
  next_attempt_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  check ((kind = 'http_domain') = (allocation_id is not null))
);
create index http_names_service on http_names (service_instance_id);
-- One HTTP domain per allocation.
create unique index http_names_allocation on http_names (allocation_id) where allocation_id is not null;
create index http_names_due on http_names (next_attempt_at) where status = 'pending';

-- The certificate the ingress serves for a name, by SNI: an exact name, or a wildcard `*.{zone}` (the
-- platform hosts of web services, signed by the local CA). The private key is sealed (secret box,
-- purpose 'tls-key'); the ingress opens it with the same ENCRYPTION_KEY.
create table tls_certificates (
  hostname text primary key check (hostname = lower(hostname)),
  -- The leaf first, then its chain, PEM.
  certificate_pem text not null,
  private_key_sealed text not null,
  -- 'acme' (ACME_DIRECTORY_URL) or 'local' (the local CA in DATA_DIR).
  issuer text not null check (issuer in ('acme', 'local')),
  not_before timestamptz not null,
  not_after timestamptz not null,
  updated_at timestamptz not null
);

-- HTTP-01 challenges the ingress answers at /.well-known/acme-challenge/{token} while an order is open.
create table acme_challenges (
  token text primary key check (char_length(token) between 1 and 200),
  hostname text not null,
  key_authorization text not null,
  created_at timestamptz not null
);

-- The ingress's routes and certificates change with these rows: the edge already reloads on
-- `edge_state` (0021), so they bump it too.
create trigger http_names_edge after insert or update or delete on http_names
  for each statement execute function bump_edge_state();
create trigger tls_certificates_edge after insert or update or delete on tls_certificates
  for each statement execute function bump_edge_state();
