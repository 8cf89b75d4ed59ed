// All SQL of the caller's identity: the profile, onboarding, the avatar pointer and the discovery ledger.
import type { Db } from '../../db/client.js';

export interface MeRow {
  id: string;
  created_at: Date;
  name: string;
  language: string;
  is_onboarded: boolean;
  chat_notifications_enabled: boolean;
  system_permissions: string[];
  avatar_asset_id: string | null;
  avatar_source: string | null;
  billing_country_code: string | null;
  email: string | null;
}

const ME_COLUMNS = `id, created_at, name, language, is_onboarded, chat_notifications_enabled, system_permissions,
  avatar_asset_id, avatar_source, billing_country_code, email`;

export async function findMe(db: Db, userId: string): Promise<MeRow | undefined> {
  const [row] = await db<MeRow[]>`
    select ${db.unsafe(ME_COLUMNS)} from users where id = ${userId} and deleted_at is null`;
  return row;
}

/** The row locked for a read-modify-write in the caller's transaction. */
export async function lockMe(db: Db, userId: string): Promise<MeRow | undefined> {
  const [row] = await db<MeRow[]>`
    select ${db.unsafe(ME_COLUMNS)} from users where id = ${userId} and deleted_at is null for update`;
  return row;
}

export interface ProfileChanges {
  name?: string;
  language?: string;
  chat_notifications_enabled?: boolean;
  billing_country_code?: string;
}

export async function updateProfile(db: Db, userId: string, changes: ProfileChanges, now: Date): Promise<MeRow> {
  // An absent change is null, and coalesce keeps the column as it is.
  const [row] = await db<MeRow[]>`
    update users set
      name = coalesce(${changes.name ?? null}, name),
      language = coalesce(${changes.language ?? null}, language),
      chat_notifications_enabled = coalesce(${changes.chat_notifications_enabled ?? null}, chat_notifications_enabled),
      billing_country_code = coalesce(${changes.billing_country_code ?? null}, billing_country_code),
      updated_at = ${now}
    where id = ${userId} and deleted_at is null
    returning ${db.unsafe(ME_COLUMNS)}`;
  return row!;
}

/** Marks the account onboarded; undefined when it already was (decided in the one statement). */
export async function completeOnboarding(db: Db, userId: string, now: Date): Promise<MeRow | undefined> {
  const [row] = await db<MeRow[]>`
    update users set is_onboarded = true, updated_at = ${now}
    where id = ${userId} and deleted_at is null and not is_onboarded
    returning ${db.unsafe(ME_COLUMNS)}`;
  return row;
}

/** Points the avatar at `assetId` (null removes it); answers the previous asset id, to delete. */
export async function setAvatar(
  db: Db,
  userId: string,
  assetId: string | null,
  source: string | null,
  now: Date,
): Promise<{ me: MeRow; previous: string | null }> {
  const [prev] = await db<{ avatar_asset_id: string | null }[]>`
    select avatar_asset_id from users where id = ${userId} for update`;
  const [row] = await db<MeRow[]>`
    update users set avatar_asset_id = ${assetId}, avatar_source = ${source}, updated_at = ${now}
    where id = ${userId}
    returning ${db.unsafe(ME_COLUMNS)}`;
  return { me: row!, previous: prev?.avatar_asset_id ?? null };
}

/** A linked provider's stored picture, the source of PUT /me/avatar/source. */
export interface ProviderPicture {
  bytes: Buffer;
}

/**
 * The picture stored with the caller's identity linked at `providerId` (features/oauth/picture-sync.ts
 * keeps it); undefined while that provider is not linked or holds no picture.
 */
export async function findProviderPicture(db: Db, userId: string, providerId: string): Promise<ProviderPicture | undefined> {
  const [row] = await db<ProviderPicture[]>`
    select a.bytes from oauth_accounts o join assets a on a.id = o.picture_asset_id
    where o.user_id = ${userId} and o.provider_id = ${providerId}`;
  return row;
}

// --- discovery_seen ---------------------------------------------------------------------------------

export async function listDiscovery(db: Db, userId: string): Promise<{ key: string; first_seen_at: Date }[]> {
  return db<{ key: string; first_seen_at: Date }[]>`
    select key, first_seen_at from discovery_seen where user_id = ${userId} order by key`;
}

/** Records first sightings in one statement; keys seen before keep their time. */
export async function markDiscovery(db: Db, userId: string, keys: string[], now: Date): Promise<void> {
  if (keys.length === 0) return;
  await db`
    insert into discovery_seen (user_id, key, first_seen_at)
    select ${userId}, k, ${now} from unnest(${keys}::text[]) as k
    on conflict (user_id, key) do nothing`;
}
