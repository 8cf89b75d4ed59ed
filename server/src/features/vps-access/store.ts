// All SQL of VPS access (migration 0049): the desired credentials of a VPS's machine, and where its SSH
// server is reached. The password is kept only as digests (DECISIONS.md §3).
import type { Db } from '../../db/client.js';
import type { MachineCredentials, MachinePasswordDigest } from '../../substrate/machine-credentials.js';
import type { SshKey } from './ssh-keys.js';

export interface AccessRow {
  ssh_keys: SshKey[];
  password_set: boolean;
}

const NONE: AccessRow = { ssh_keys: [], password_set: false };

export async function findAccess(db: Db, resourceId: string): Promise<AccessRow> {
  const [row] = await db<AccessRow[]>`
    select ssh_keys, password_digest is not null as password_set from vps_access where resource_id = ${resourceId}`;
  return row ?? NONE;
}

export async function setKeys(db: Db, resourceId: string, keys: SshKey[], now: Date): Promise<AccessRow> {
  const [row] = await db<AccessRow[]>`
    insert into vps_access (resource_id, ssh_keys, updated_at)
    values (${resourceId}, ${db.json(keys as never)}, ${now})
    on conflict (resource_id) do update set ssh_keys = excluded.ssh_keys, updated_at = excluded.updated_at
    returning ssh_keys, password_digest is not null as password_set`;
  return row!;
}

export async function setPassword(
  db: Db,
  resourceId: string,
  digest: MachinePasswordDigest | null,
  now: Date,
): Promise<void> {
  await db`
    insert into vps_access (resource_id, password_digest, updated_at)
    values (${resourceId}, ${digest === null ? null : db.json(digest as never)}, ${now})
    on conflict (resource_id) do update set password_digest = excluded.password_digest, updated_at = excluded.updated_at`;
}

/** A reinstall's: password sign-in off until the customer resets it. */
export async function clearPassword(db: Db, resourceId: string, now: Date): Promise<void> {
  await db`update vps_access set password_digest = null, updated_at = ${now} where resource_id = ${resourceId} and password_digest is not null`;
}

/** What the substrate writes into the machine. */
export async function machineCredentials(db: Db, resourceId: string): Promise<MachineCredentials> {
  const [row] = await db<{ ssh_keys: SshKey[]; password_digest: MachinePasswordDigest | null }[]>`
    select ssh_keys, password_digest from vps_access where resource_id = ${resourceId}`;
  return {
    authorizedKeys: (row?.ssh_keys ?? []).map((k) => k.public_key),
    password: row?.password_digest ?? null,
  };
}

/** The SSH server's external address: the machine's system allocation (DECISIONS.md §6 "Network"). */
export async function sshAddress(
  db: Db,
  resourceId: string,
): Promise<{ host: string | null; port: number | null }> {
  const [row] = await db<{ host: string; port: number }[]>`
    select host(external_ip) as host, external_port as port from port_allocations
    where resource_id = ${resourceId} and is_system and protocol = 'tcp'
    order by allocated_at limit 1`;
  return { host: row?.host ?? null, port: row?.port ?? null };
}

/** The machine a job applies credentials to: its unit and volume, while it is not being rebuilt. */
export async function machineOf(
  db: Db,
  resourceId: string,
): Promise<{ id: string; volume_id: string; status: string } | undefined> {
  const [row] = await db<{ id: string; volume_id: string; status: string }[]>`
    select id, volume_id, status from service_resources
    where id = ${resourceId} and kind = 'virtual_machine' and deleted_at is null and volume_id is not null`;
  return row;
}
