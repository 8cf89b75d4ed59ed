-- Certificates of the names on the HTTP ingress (issue 23; DECISIONS.md §6 "DNS and domains"): the ACME
-- account the platform orders them with, and the platform DNS answering single labels held under a
-- parent domain.

-- One ACME account per directory URL. Its private key is sealed (secret box, purpose 'acme-account-key'):
-- a stolen database does not let anyone revoke or order certificates as the platform.
create table acme_accounts (
  directory_url text primary key,
  account_key_sealed text not null,
  account_url text,
  created_at timestamptz not null
);

-- A custom domain or HTTP domain that is a single label under a parent domain lives in a zone the
-- platform's DNS serves: it answers its A record (the ingress), so the rows change what it serves.
create trigger http_names_dns after insert or update of hostname or delete on http_names
  for each statement execute function bump_dns_state();
