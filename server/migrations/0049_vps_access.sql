-- VPS access (DECISIONS.md §8 "VPS access"): what a VPS's machine lets in, as desired state the substrate
-- writes into it (the apply_machine_access job, and the vm_access step of provisioning and reinstall).
-- The keys are public; the root password is kept only as digests (DECISIONS.md §3: a secret only ever
-- compared): crypt(3)'s SHA-512 form for the machine's /etc/shadow, scrypt for the LXD agent's SSH server.
create table vps_access (
  resource_id uuid primary key references service_resources (id) on delete cascade,
  -- [{name, type, fingerprint, public_key}], in the order the customer sent them; at most 10.
  ssh_keys jsonb not null default '[]',
  -- {shadow, scrypt: {N, r, p, salt, hash}}; null: password sign-in is off.
  password_digest jsonb,
  updated_at timestamptz not null default now()
);
