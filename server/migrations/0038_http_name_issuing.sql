-- One issuance attempt per name at a time (certificates/issuance.ts): an attempt claims the name until
-- `issuing_until` with one conditional update, so the retry sweep and an attach's job running at the same
-- time on two workers cannot both place an ACME order for it. A worker killed mid-attempt leaves a claim
-- that expires.
alter table http_names add column issuing_until timestamptz;
