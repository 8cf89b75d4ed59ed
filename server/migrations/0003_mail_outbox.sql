-- The mail outbox: every mail the platform sends (sign-in codes, address verification, password
-- resets and notices) is a row written in the same transaction as the state change it announces, so a
-- mail exists if and only if that change committed. A background sender (server/src/mail/sender.ts)
-- claims due rows, delivers them and records the outcome; several API processes may run it at once.
--
-- text_body, html_body and code hold one-time codes and single-use links: anyone who reads them can
-- sign in as, or take over, the recipient. They are kept only until the mail is sent (or given up),
-- then erased; the envelope (recipient, subject, kind, times, attempts, last error) stays for audit.
-- Subjects never carry a code or a link for that reason.
create table mail_outbox (
  id uuid primary key,
  recipient text not null,
  subject text not null,
  -- Template name (server/src/mail/templates.ts). Not a check constraint: a new kind is code, not schema.
  kind text not null,
  text_body text,
  html_body text,
  -- The one-time code of a login_code mail, so that the development sender can log it without parsing
  -- the body (DECISIONS.md §5: "the sign-in code is logged"). Erased with the bodies.
  code text,
  created_at timestamptz not null,
  next_attempt_at timestamptz not null,
  attempts integer not null default 0 check (attempts >= 0),
  sent_at timestamptz,
  given_up_at timestamptz,
  -- A short, secret-free description of the latest failed attempt (never the SMTP URL or a body).
  last_error text check (char_length(last_error) <= 500),
  -- A sender's lease on the row while it delivers it; a crashed sender's lease simply runs out.
  locked_until timestamptz,
  check (sent_at is null or given_up_at is null),
  check ((sent_at is null and given_up_at is null) or (text_body is null and html_body is null and code is null))
);

-- What the sender scans: rows still waiting for delivery, oldest due first. Sent and abandoned rows
-- are not in the index, so it stays as small as the backlog.
create index mail_outbox_due on mail_outbox (next_attempt_at) where sent_at is null and given_up_at is null;
