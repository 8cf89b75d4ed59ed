-- The exclusive hold on a machine's screen (document 2 §3 "screen hold", §4 "Consoles and tickets";
-- DECISIONS.md §6 "Screen"): one row per machine, taken by a screen ticket, extended by a refresh, lapsed
-- by a release. Taking, refreshing and taking over are each one conditional upsert on this row, so two
-- API processes cannot both hand out the hold. The session id the caller refreshes with is a bearer
-- secret: only its SHA-256 is stored (and carried by the screen tickets it was minted with, so the
-- gateway knows which socket belongs to the holder). A released hold keeps its row, lapsed, so only its
-- own session may re-take it by a refresh while nobody else claims it.
create table screen_holds (
  resource_id uuid primary key references service_resources (id) on delete cascade,
  session_digest text not null check (session_digest ~ '^[0-9a-f]{64}$'),
  user_id uuid not null references users (id) on delete cascade,
  taken_at timestamptz not null,
  expires_at timestamptz not null
);
