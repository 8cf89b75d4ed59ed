-- Claimed domains (document 1: "Domain verification", "Domain verification status", "Audit and
-- domains"). A claim is keyed by (organization, domain) and has no id; several organizations may claim
-- one domain, and which of them holds it is decided from the claims' states (features/domains/holder.ts).

create table domain_claims (
  organization_id uuid not null references organizations (id) on delete cascade,
  -- The registrable domain: lowercase A-labels, no trailing root dot, at most 253 characters.
  domain text not null check (domain ~ '^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$'
                              and char_length(domain) <= 253),
  -- The TXT value that proves the claim; public by nature (it is published in DNS), made once.
  record_value text not null unique,
  status text not null default 'pending' check (status in ('pending', 'verified', 'lost', 'failed')),
  first_verified_at timestamptz,
  verified_at timestamptz,
  last_checked_at timestamptz,
  last_error text,
  lost_since timestamptz,
  -- A dated exemption for a few pre-existing domains: set by staff or SQL, never through the API.
  grandfathered_until timestamptz,
  created_at timestamptz not null,
  primary key (organization_id, domain),
  -- lost_since is set exactly while the claim is lost (seed "Domain verification").
  check ((status = 'lost') = (lost_since is not null)),
  -- A claim that was ever verified keeps when; verified and lost claims were verified once.
  check (status not in ('verified', 'lost') or (first_verified_at is not null and verified_at is not null)),
  check (first_verified_at is null or verified_at >= first_verified_at)
);

-- Who else claims a domain (isDomainServable reads every claim of one domain).
create index domain_claims_domain on domain_claims (domain);
-- The periodic recheck: verified and lost claims, the longest unchecked first.
create index domain_claims_recheck on domain_claims (last_checked_at nulls first) where status in ('verified', 'lost');
