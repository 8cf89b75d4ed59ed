// SQL of the staff routes for public content that the public reads' store (features/public/store.ts)
// does not already hold: reading a row for update, changing it, and the unique hostname of resellers.
// Creating incidents, maintenance windows and resellers, assets and captcha configurations is that
// store's own (createIncident, createMaintenance, createReseller, createAsset, upsertCaptchaConfig).
import { isUniqueViolation, type Db } from '../../db/client.js';
import { conflict } from '../../http/errors.js';
import type { CaptchaConfigRow, IncidentRow, MaintenanceRow, ResellerRow } from '../public/store.js';

const INCIDENT = 'id, title, message, started_at, resolved_at';
const MAINTENANCE = 'id, title, scheduled_at, expected_duration_minutes, cancelled_at';
const RESELLER =
  'id, name, hostname, brand_color, custom_plan_selector_enabled, og_image_mode, discord_invite_url, ' +
  'icon_asset_id, og_image_asset_id, enabled, deleted_at';
const CAPTCHA = 'id, hostname, provider, site_key, secret_sealed, verify_url, enabled, protected_actions';
const HOSTNAME_KEY = 'resellers_hostname_key';

/**
 * Runs a write that may take a reseller hostname. The unique index decides (not a read before the
 * write), so of two concurrent writes of one hostname exactly one succeeds and the other is 409.
 */
export async function takingHostname<T>(hostname: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err, HOSTNAME_KEY)) {
      throw conflict('hostname-taken', `Another reseller is served on ${hostname}.`);
    }
    throw err;
  }
}

export async function lockIncident(db: Db, id: string): Promise<IncidentRow | undefined> {
  const [row] = await db<IncidentRow[]>`
    select ${db.unsafe(INCIDENT)} from public_incidents where id = ${id} for update`;
  return row;
}

export async function updateIncident(
  db: Db,
  id: string,
  next: { title: string; message: string | null; startedAt: Date },
): Promise<IncidentRow> {
  const [row] = await db<IncidentRow[]>`
    update public_incidents set title = ${next.title}, message = ${next.message}, started_at = ${next.startedAt}
    where id = ${id}
    returning ${db.unsafe(INCIDENT)}`;
  return row!;
}

export async function setIncidentResolved(db: Db, id: string, at: Date): Promise<IncidentRow> {
  const [row] = await db<IncidentRow[]>`
    update public_incidents set resolved_at = ${at} where id = ${id}
    returning ${db.unsafe(INCIDENT)}`;
  return row!;
}

export async function lockMaintenance(db: Db, id: string): Promise<MaintenanceRow | undefined> {
  const [row] = await db<MaintenanceRow[]>`
    select ${db.unsafe(MAINTENANCE)} from public_maintenances where id = ${id} for update`;
  return row;
}

export async function setMaintenanceCancelled(db: Db, id: string, at: Date): Promise<MaintenanceRow> {
  const [row] = await db<MaintenanceRow[]>`
    update public_maintenances set cancelled_at = ${at} where id = ${id}
    returning ${db.unsafe(MAINTENANCE)}`;
  return row!;
}

/** A reseller that was not deleted, locked for the rest of the transaction. */
export async function lockReseller(db: Db, id: string): Promise<ResellerRow | undefined> {
  const [row] = await db<ResellerRow[]>`
    select ${db.unsafe(RESELLER)} from resellers where id = ${id} and deleted_at is null for update`;
  return row;
}

export async function resellerExists(db: Db, id: string): Promise<boolean> {
  const [row] = await db`select 1 from resellers where id = ${id} and deleted_at is null`;
  return row !== undefined;
}

export interface ResellerChanges {
  name: string;
  hostname: string;
  brand_color: string;
  custom_plan_selector_enabled: boolean;
  og_image_mode: ResellerRow['og_image_mode'];
  discord_invite_url: string | null;
  enabled: boolean;
}

export async function updateReseller(db: Db, id: string, next: ResellerChanges): Promise<ResellerRow> {
  const [row] = await db<ResellerRow[]>`
    update resellers set name = ${next.name}, hostname = ${next.hostname}, brand_color = ${next.brand_color},
      custom_plan_selector_enabled = ${next.custom_plan_selector_enabled}, og_image_mode = ${next.og_image_mode},
      discord_invite_url = ${next.discord_invite_url}, enabled = ${next.enabled}
    where id = ${id}
    returning ${db.unsafe(RESELLER)}`;
  return row!;
}

/** Points the reseller's icon or OG image at a new asset. */
export async function setResellerImage(
  db: Db,
  id: string,
  which: 'icon' | 'og_image',
  assetId: string,
): Promise<ResellerRow> {
  const [row] =
    which === 'icon'
      ? await db<ResellerRow[]>`
          update resellers set icon_asset_id = ${assetId} where id = ${id} returning ${db.unsafe(RESELLER)}`
      : await db<ResellerRow[]>`
          update resellers set og_image_asset_id = ${assetId} where id = ${id} returning ${db.unsafe(RESELLER)}`;
  return row!;
}

/**
 * The configuration of exactly this hostname (null: the platform's own), locked; absent, the hostname
 * itself is locked (a transaction-scoped advisory lock), so two first writes of one hostname queue.
 */
export async function lockCaptchaConfig(
  db: Db,
  hostname: string | null,
): Promise<CaptchaConfigRow | undefined> {
  await db`select pg_advisory_xact_lock(hashtextextended(${`captcha-config:${hostname ?? ''}`}, 0))`;
  const [row] = await db<CaptchaConfigRow[]>`
    select ${db.unsafe(CAPTCHA)} from captcha_configs where hostname is not distinct from ${hostname} for update`;
  return row;
}

export async function deleteCaptchaConfig(db: Db, hostname: string | null): Promise<boolean> {
  const rows =
    await db`delete from captcha_configs where hostname is not distinct from ${hostname} returning id`;
  return rows.length > 0;
}
