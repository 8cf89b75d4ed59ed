-- Invitations into an organization by email (document 1, "Invitation page", "Invitation status",
-- "Invitations"; DECISIONS.md §4: an invitation expires 7 days after it is made).
--
-- `status` is the stored status; `expired` is never stored: a pending invitation reads expired from
-- `expires_at` on, judged with the request's clock. Creating, revoking and accepting take the
-- organization's lock first (as every membership change does), so "one pending invitation per address"
-- and "one membership per accept" are decided one request at a time without a unique index that an
-- expired pending invitation would trip.
create table invitations (
  id uuid primary key,
  organization_id uuid not null references organizations (id) on delete cascade,
  -- Stored lowercase, as users.email is: addresses compare case-insensitively.
  email text not null check (email = lower(email) and char_length(email) between 3 and 254),
  role text not null check (role in ('owner', 'admin', 'billing', 'member')),
  status text not null check (status in ('pending', 'accepted', 'declined', 'revoked')),
  inviter_user_id uuid references users (id) on delete set null,
  -- The inviter's name when they invited: the page shows it once their account is gone.
  inviter_name text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  accepted_at timestamptz,
  accepted_by_user_id uuid references users (id) on delete set null,
  declined_at timestamptz,
  revoked_at timestamptz,
  -- The invitee lifted the 30-day re-invite cool-down of this declined invitation.
  reinvite_allowed_at timestamptz,
  check (expires_at > created_at),
  check ((status = 'accepted') = (accepted_at is not null)),
  check ((status = 'declined') = (declined_at is not null)),
  check ((status = 'revoked') = (revoked_at is not null)),
  check (reinvite_allowed_at is null or status = 'declined')
);
create index invitations_organization on invitations (organization_id, created_at desc);
create index invitations_organization_email on invitations (organization_id, email, created_at desc);
