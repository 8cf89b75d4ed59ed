// All SQL of the public reads. Rows are created here too; the staff routes that manage them come
// later and will call the same functions.
import { createHash, randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';

export interface IncidentRow {
  id: string;
  title: string;
  message: string | null;
  started_at: Date;
  resolved_at: Date | null;
}

export interface MaintenanceRow {
  id: string;
  title: string;
  scheduled_at: Date;
  expected_duration_minutes: number | null;
  cancelled_at: Date | null;
}

export interface AssetRow {
  id: string;
  kind: string;
  content_type: string;
  bytes: Buffer;
  /** A strong validator of the bytes: `"<sha256 hex>"`, quotes included (RFC 9110 §8.8.3). */
  etag: string;
  organization_id: string | null;
  created_at: Date;
}

export interface ResellerRow {
  id: string;
  name: string;
  hostname: string;
  brand_color: string;
  custom_plan_selector_enabled: boolean;
  og_image_mode: 'platform' | 'logo' | 'custom' | 'disabled';
  discord_invite_url: string | null;
  icon_asset_id: string | null;
  og_image_asset_id: string | null;
  enabled: boolean;
  deleted_at: Date | null;
}

export interface CaptchaConfigRow {
  id: string;
  hostname: string | null;
  provider: string;
  site_key: string | null;
  /** The provider's secret, sealed with ENCRYPTION_KEY ('captcha-secret'); never returned by the API. */
  secret_sealed: string | null;
  verify_url: string | null;
  enabled: boolean;
  protected_actions: string[];
}

export async function listOngoingIncidents(db: Db, now: Date): Promise<IncidentRow[]> {
  return db<IncidentRow[]>`
    select id, title, message, started_at, resolved_at from public_incidents
    where resolved_at is null and started_at <= ${now}
    order by started_at, id`;
}

export async function createIncident(
  db: Db,
  input: { title: string; message?: string | null; startedAt: Date },
  now: Date,
): Promise<IncidentRow> {
  const [row] = await db<IncidentRow[]>`
    insert into public_incidents (id, title, message, started_at, created_at)
    values (${randomUUID()}, ${input.title}, ${input.message ?? null}, ${input.startedAt}, ${now})
    returning id, title, message, started_at, resolved_at`;
  return row!;
}

export async function resolveIncident(db: Db, id: string, at: Date): Promise<void> {
  await db`update public_incidents set resolved_at = ${at} where id = ${id} and resolved_at is null`;
}

export async function listUpcomingMaintenances(db: Db, since: Date): Promise<MaintenanceRow[]> {
  return db<MaintenanceRow[]>`
    select id, title, scheduled_at, expected_duration_minutes, cancelled_at from public_maintenances
    where cancelled_at is null and scheduled_at >= ${since}
    order by scheduled_at, id`;
}

export async function createMaintenance(
  db: Db,
  input: { title: string; scheduledAt: Date; expectedDurationMinutes?: number | null },
  now: Date,
): Promise<MaintenanceRow> {
  const [row] = await db<MaintenanceRow[]>`
    insert into public_maintenances (id, title, scheduled_at, expected_duration_minutes, created_at)
    values (${randomUUID()}, ${input.title}, ${input.scheduledAt}, ${input.expectedDurationMinutes ?? null}, ${now})
    returning id, title, scheduled_at, expected_duration_minutes, cancelled_at`;
  return row!;
}

export async function cancelMaintenance(db: Db, id: string, at: Date): Promise<void> {
  await db`update public_maintenances set cancelled_at = ${at} where id = ${id} and cancelled_at is null`;
}

export async function insertClientError(
  db: Db,
  report: {
    errorId: string;
    message: string;
    digest: string | null;
    stack: string | null;
    url: string | null;
    userAgent: string | null;
    source: string;
    requestId: string;
  },
  now: Date,
): Promise<void> {
  await db`
    insert into client_errors (error_id, message, digest, stack, url, user_agent, source, request_id, received_at)
    values (${report.errorId}, ${report.message}, ${report.digest}, ${report.stack}, ${report.url},
            ${report.userAgent}, ${report.source}, ${report.requestId}, ${now})`;
}

export async function findAsset(db: Db, id: string): Promise<AssetRow | undefined> {
  const [row] = await db<AssetRow[]>`
    select id, kind, content_type, bytes, etag, organization_id, created_at from assets where id = ${id}`;
  return row;
}

/** Assets are immutable: a replaced image is a new asset, with a new id and its own ETag. */
export async function createAsset(
  db: Db,
  input: { kind: string; contentType: string; bytes: Buffer; organizationId?: string | null },
  now: Date,
): Promise<AssetRow> {
  const etag = `"${createHash('sha256').update(input.bytes).digest('hex')}"`;
  const [row] = await db<AssetRow[]>`
    insert into assets (id, kind, content_type, bytes, etag, organization_id, created_at)
    values (${randomUUID()}, ${input.kind}, ${input.contentType}, ${input.bytes}, ${etag}, ${input.organizationId ?? null}, ${now})
    returning id, kind, content_type, bytes, etag, organization_id, created_at`;
  return row!;
}

/** Deletes an asset of the given kind (a kind guard: an avatar id never deletes someone's icon). */
export async function deleteAsset(db: Db, id: string, kind: string): Promise<void> {
  await db`delete from assets where id = ${id} and kind = ${kind}`;
}

export async function findLiveResellerByHost(db: Db, hostname: string): Promise<ResellerRow | undefined> {
  const [row] = await db<ResellerRow[]>`
    select id, name, hostname, brand_color, custom_plan_selector_enabled, og_image_mode, discord_invite_url,
           icon_asset_id, og_image_asset_id, enabled, deleted_at
    from resellers where hostname = ${hostname} and enabled and deleted_at is null`;
  return row;
}

export async function createReseller(
  db: Db,
  input: Omit<ResellerRow, 'id' | 'deleted_at' | 'enabled'> & { enabled?: boolean },
  now: Date,
): Promise<ResellerRow> {
  const [row] = await db<ResellerRow[]>`
    insert into resellers (id, name, hostname, brand_color, custom_plan_selector_enabled, og_image_mode,
                           discord_invite_url, icon_asset_id, og_image_asset_id, enabled, created_at)
    values (${randomUUID()}, ${input.name}, ${input.hostname.toLowerCase()}, ${input.brand_color},
            ${input.custom_plan_selector_enabled}, ${input.og_image_mode}, ${input.discord_invite_url},
            ${input.icon_asset_id}, ${input.og_image_asset_id}, ${input.enabled ?? true}, ${now})
    returning id, name, hostname, brand_color, custom_plan_selector_enabled, og_image_mode, discord_invite_url,
              icon_asset_id, og_image_asset_id, enabled, deleted_at`;
  return row!;
}

export async function deleteReseller(db: Db, id: string, at: Date): Promise<void> {
  await db`update resellers set deleted_at = ${at} where id = ${id} and deleted_at is null`;
}

/**
 * The configuration that applies to requests addressed to `hostname`: the platform's (hostname null)
 * is a floor a reseller hostname's own can add to, never lower (DECISIONS.md §7). With a usable
 * configuration of its own, the host's provider checks every action either lists; otherwise the
 * platform's applies as it is. A protected action stays protected whatever `Host` says.
 */
export async function findCaptchaConfigForHost(db: Db, hostname: string): Promise<CaptchaConfigRow | undefined> {
  const rows = await db<CaptchaConfigRow[]>`
    select id, hostname, provider, site_key, secret_sealed, verify_url, enabled, protected_actions
    from captcha_configs where hostname = ${hostname} or hostname is null`;
  return effectiveCaptchaConfig(
    rows.find((r) => r.hostname !== null),
    rows.find((r) => r.hostname === null),
  );
}

/** Switched on and fully keyed: a configuration that can check a captcha. */
export const usableCaptcha = (r: CaptchaConfigRow | undefined): r is CaptchaConfigRow =>
  !!r && r.enabled && !!r.site_key && !!r.secret_sealed && !!r.verify_url;

export function effectiveCaptchaConfig(
  host: CaptchaConfigRow | undefined,
  platform: CaptchaConfigRow | undefined,
): CaptchaConfigRow | undefined {
  const floor = usableCaptcha(platform) ? platform.protected_actions : [];
  if (usableCaptcha(host)) return { ...host, protected_actions: [...new Set([...floor, ...host.protected_actions])] };
  if (usableCaptcha(platform)) return platform;
  return host ?? platform;
}

export async function upsertCaptchaConfig(
  db: Db,
  input: Omit<CaptchaConfigRow, 'id'>,
  now: Date,
): Promise<CaptchaConfigRow> {
  const [existing] = await db<{ id: string }[]>`
    select id from captcha_configs where hostname is not distinct from ${input.hostname}`;
  const [row] = await db<CaptchaConfigRow[]>`
    insert into captcha_configs (id, hostname, provider, site_key, secret_sealed, verify_url, enabled, protected_actions,
                                 created_at, updated_at)
    values (${existing?.id ?? randomUUID()}, ${input.hostname}, ${input.provider}, ${input.site_key}, ${input.secret_sealed},
            ${input.verify_url}, ${input.enabled}, ${input.protected_actions}, ${now}, ${now})
    on conflict (id) do update set provider = excluded.provider, site_key = excluded.site_key,
      secret_sealed = excluded.secret_sealed, verify_url = excluded.verify_url, enabled = excluded.enabled,
      protected_actions = excluded.protected_actions, updated_at = excluded.updated_at
    returning id, hostname, provider, site_key, secret_sealed, verify_url, enabled, protected_actions`;
  return row!;
}

/** Configurations whose secret is still stored in the clear (written before migration 0005). */
export async function listUnsealedCaptchaSecrets(db: Db): Promise<{ id: string; secret: string }[]> {
  return db<{ id: string; secret: string }[]>`select id, secret from captcha_configs where secret is not null`;
}

export async function sealCaptchaSecret(db: Db, id: string, sealed: string): Promise<void> {
  await db`update captcha_configs set secret_sealed = ${sealed}, secret = null where id = ${id}`;
}
