// The SFTP server's SQL: the account a user name signs in as, and which signed-in sessions may go on.
import type { Db } from '../../db/client.js';

export interface SignInAccount {
  service_instance_id: string;
  password_digest: string | null;
  generation: string;
  /** Enabled, the service made and its subscription active, its product offering SFTP. */
  usable: boolean;
  /** The volume the service's primary unit runs on (else its first volume), null when it has none. */
  volume_id: string | null;
}

export async function accountByUsername(db: Db, username: string): Promise<SignInAccount | undefined> {
  const [row] = await db<SignInAccount[]>`
    select a.service_instance_id, a.password_digest, a.generation::text,
      (a.enabled and s.status in ('running', 'stopped') and sub.status = 'active'
        and 'sftp' = any(p.features)) as usable,
      coalesce(
        (select r.volume_id from service_resources r
          where r.service_instance_id = s.id and r.role = 'primary' and r.volume_id is not null
            and r.deleted_at is null order by r.created_at limit 1),
        (select r.id from service_resources r
          where r.service_instance_id = s.id and r.kind = 'volume' and r.deleted_at is null
          order by r.created_at limit 1)) as volume_id
    from sftp_accounts a
    join service_instances s on s.id = a.service_instance_id
    join subscriptions sub on sub.id = s.subscription_id
    join catalog_products p on p.id = s.product_id
    where a.username = ${username}`;
  return row;
}

/**
 * Of these sessions (service and the account generation each signed in at), the keys
 * `service:generation` that may go on: the account still enabled at that generation (no disable or
 * rotate since), the service not suspended or ended.
 */
export async function sessionsStillAllowed(
  db: Db,
  sessions: readonly { serviceId: string; generation: string }[],
): Promise<Set<string>> {
  if (sessions.length === 0) return new Set();
  const rows = await db<{ key: string }[]>`
    select a.service_instance_id || ':' || a.generation as key
    from sftp_accounts a
    join service_instances s on s.id = a.service_instance_id
    join subscriptions sub on sub.id = s.subscription_id
    where a.service_instance_id = any(${[...new Set(sessions.map((s) => s.serviceId))]}::uuid[])
      and a.enabled and s.status in ('running', 'stopped') and sub.status = 'active'`;
  return new Set(rows.map((r) => r.key));
}
