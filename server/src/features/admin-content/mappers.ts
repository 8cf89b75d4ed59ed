// Row → staff view, as allow-lists: a new column never reaches a response by accident, and a captcha
// secret never does at all.
import type { components } from '../../../../generated/api.js';
import { toIncident, toMaintenance, toResellerBranding } from '../public/mappers.js';
import type { CaptchaConfigRow, IncidentRow, MaintenanceRow, ResellerRow } from '../public/store.js';

type Schemas = components['schemas'];

/** How the platform's own captcha configuration (hostname null) is named on the wire. */
export const PLATFORM_HOSTNAME = '_platform';

export const toAdminIncident = (r: IncidentRow): Schemas['AdminIncident'] => ({
  ...toIncident(r),
  resolved_at: r.resolved_at?.toISOString() ?? null,
});

export const toAdminMaintenance = (r: MaintenanceRow): Schemas['AdminMaintenance'] => ({
  ...toMaintenance(r),
  cancelled_at: r.cancelled_at?.toISOString() ?? null,
});

export const toAdminReseller = (r: ResellerRow): Schemas['AdminReseller'] => ({
  ...toResellerBranding(r),
  og_image_asset_id: r.og_image_asset_id,
  enabled: r.enabled,
});

export const toAdminCaptchaConfig = (r: CaptchaConfigRow): Schemas['AdminCaptchaConfig'] => ({
  hostname: r.hostname ?? PLATFORM_HOSTNAME,
  enabled: r.enabled,
  provider: r.provider,
  site_key: r.site_key,
  secret_set: r.secret_sealed !== null,
  protected_actions: [...r.protected_actions],
  verify_url: r.verify_url,
});
