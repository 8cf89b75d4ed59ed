import type { Db } from '../../db/client.js';

export interface ProfileRow {
  id: string;
  name: string;
  avatar_asset_id: string | null;
  deleted_at: Date | null;
}

/** Deleted accounts too: an application still resolves the ids it holds. */
export function findProfiles(db: Db, ids: string[]): Promise<ProfileRow[]> {
  return db<ProfileRow[]>`
    select id, name, avatar_asset_id, deleted_at from users where id = any(${ids}::uuid[])`;
}

export async function findLinkedUser(
  db: Db,
  providerId: string,
  providerUserId: string,
): Promise<{ user_id: string; name: string; language: string } | undefined> {
  const [row] = await db<{ user_id: string; name: string; language: string }[]>`
    select u.id as user_id, u.name, u.language
    from oauth_accounts a join users u on u.id = a.user_id and u.deleted_at is null
    where a.provider_id = ${providerId} and a.provider_user_id = ${providerUserId}`;
  return row;
}
