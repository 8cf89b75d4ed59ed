// Row → API shape, as allow-lists: a new column never reaches a response by accident.
import type { components } from '../../../../generated/api.js';
import type { CaptchaConfigRow, IncidentRow, MaintenanceRow, ResellerRow } from './store.js';

type Schemas = components['schemas'];

export const toIncident = (r: IncidentRow): Schemas['PublicIncident'] => ({
  id: r.id,
  title: r.title,
  started_at: r.started_at.toISOString(),
  message: r.message,
});

export const toMaintenance = (r: MaintenanceRow): Schemas['PublicMaintenance'] => ({
  id: r.id,
  title: r.title,
  scheduled_at: r.scheduled_at.toISOString(),
  expected_duration_minutes: r.expected_duration_minutes,
});

function resolvedOgImage(r: ResellerRow): string | null {
  switch (r.og_image_mode) {
    case 'logo':
      return r.icon_asset_id;
    case 'custom':
      return r.og_image_asset_id;
    case 'platform':
    case 'disabled':
      return null;
  }
}

export const toResellerBranding = (r: ResellerRow): Schemas['ResellerBranding'] => ({
  id: r.id,
  name: r.name,
  hostname: r.hostname,
  brand_color: r.brand_color,
  custom_plan_selector_enabled: r.custom_plan_selector_enabled,
  og_image_mode: r.og_image_mode,
  discord_invite_url: r.discord_invite_url,
  icon_asset_id: r.icon_asset_id,
  resolved_og_image_asset_id: resolvedOgImage(r),
});

const NO_CAPTCHA: Schemas['PublicCaptchaConfig'] = {
  enabled: false,
  provider: 'none',
  protected_actions: [],
  site_key: null,
};

/** Enabled only when switched on and fully keyed; the secret never leaves this function. */
export function toPublicCaptchaConfig(r: CaptchaConfigRow | undefined): Schemas['PublicCaptchaConfig'] {
  if (!r) return NO_CAPTCHA;
  const enabled = r.enabled && !!r.site_key && !!r.secret_sealed && !!r.verify_url;
  return {
    enabled,
    provider: r.provider,
    protected_actions: enabled ? [...r.protected_actions] : [],
    site_key: enabled ? r.site_key : null,
  };
}

/** Hostnames compare lowercase and without the root dot. */
export const normalizeHostname = (h: string): string => h.trim().toLowerCase().replace(/\.$/, '');
