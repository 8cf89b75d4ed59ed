-- Hardening after an outside probe (DECISIONS.md §7, issue 26).

-- POST /auth/sudo/exit ends the session's elevation on the server: an elevated access token carries
-- the epoch it was elevated in (claim `elv`) and is elevated only while the session's epoch is still
-- that one; leaving elevation moves the epoch on.
alter table sessions add column elevation_epoch integer not null default 0;

-- A member added directly by id (POST /organizations/{id}/members) shows no address to the other
-- members: the adder knew an id, not an address, and must not learn one from it.
alter table organization_members add column added_by_id boolean not null default false;

-- A sign-up waiting for its job: the request stores what it was given and queues the job, whether or
-- not the address has an account, so both answers take the same path and the same time; the job
-- makes the account (or tells the address's owner) and deletes the row in the same transaction.
-- The password is stored as users.password_hash is (argon2id), never in the job queue's payloads.
create table pending_signups (
  id uuid primary key,
  email text not null check (email = lower(email)),
  password_hash text not null,
  name text,
  language text not null,
  link_base text not null,
  created_at timestamptz not null
);
