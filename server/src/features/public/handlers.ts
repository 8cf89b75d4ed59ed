// Unauthenticated public reads (document 1, "Assets and public reads").
import { PUBLIC_READ } from '../../http/default-headers.js';
import { forbidden, notFound } from '../../http/errors.js';
import type { AreaHandlers } from '../../http/handler.js';
import { hit, scaled } from '../../ratelimit/limiter.js';
import { CAPABILITY_NAMES } from '../../config.js';
import { assetAnswer } from '../assets/serve.js';
import { normalizeHostname, toIncident, toMaintenance, toPublicCaptchaConfig, toResellerBranding } from './mappers.js';
import * as store from './store.js';

/** Kinds anyone may read; everything else is owner-scoped and read through the signed-in route. */
export const PUBLIC_ASSET_KINDS = new Set(['catalog_icon', 'reseller_icon', 'reseller_og_image', 'avatar', 'organization_icon']);

// Per source address; the seeds fix no number, so it scales with SOURCE_RATE_LIMIT_SCALE.
const CLIENT_ERRORS_PER_SOURCE = { name: 'client-errors:source', max: 30, windowSeconds: 60 };
const MESSAGE_MAX = 2000;
const STACK_MAX = 8000;
const DAY = 24 * 60 * 60 * 1000;
/** Public assets are cacheable a day (seed document 1, "Assets and public reads"). */
const PUBLIC_CACHE = 'public, max-age=86400';

export const publicHandlers: AreaHandlers<
  | 'publicCapabilitiesGet'
  | 'publicIncidentsList'
  | 'publicMaintenancesList'
  | 'publicClientErrorsCreate'
  | 'publicCaptchaConfigGet'
  | 'publicResellerByHostGet'
  | 'publicAssetGet'
> = {
  async publicCapabilitiesGet({ ctx }) {
    const caps = ctx.config.capabilities;
    return { status: 200, body: Object.fromEntries(CAPABILITY_NAMES.map((c) => [c, caps[c]])) as typeof caps, headers: PUBLIC_READ };
  },

  async publicIncidentsList({ ctx }) {
    const rows = await store.listOngoingIncidents(ctx.sql, ctx.clock.now());
    return { status: 200, body: rows.map(toIncident), headers: PUBLIC_READ };
  },

  async publicMaintenancesList({ ctx }) {
    const since = new Date(ctx.clock.now().getTime() - DAY);
    const rows = await store.listUpcomingMaintenances(ctx.sql, since);
    return { status: 200, body: rows.map(toMaintenance), headers: PUBLIC_READ };
  },

  async publicClientErrorsCreate({ body, ctx }) {
    const now = ctx.clock.now();
    // A tripped limit drops the report but never changes the answer.
    const { allowed } = await hit(ctx.sql, scaled(CLIENT_ERRORS_PER_SOURCE, ctx.config.sourceRateLimitScale), ctx.ip, now);
    if (allowed) {
      await store.insertClientError(
        ctx.sql,
        {
          errorId: body.error_id,
          message: truncate(body.message, MESSAGE_MAX),
          digest: body.digest ?? null,
          stack: body.stack == null ? null : truncate(body.stack, STACK_MAX),
          url: body.url ?? null,
          userAgent: body.user_agent ?? null,
          source: ctx.ip,
          requestId: ctx.requestId,
        },
        now,
      );
    }
    return { status: 204 };
  },

  async publicCaptchaConfigGet({ path, ctx }) {
    const row = await store.findCaptchaConfigForHost(ctx.sql, normalizeHostname(path.hostname));
    return { status: 200, body: toPublicCaptchaConfig(row), headers: PUBLIC_READ };
  },

  async publicResellerByHostGet({ path, ctx }) {
    const row = await store.findLiveResellerByHost(ctx.sql, normalizeHostname(path.hostname));
    if (!row) throw notFound('No reseller is served on this hostname.');
    return { status: 200, body: toResellerBranding(row), headers: PUBLIC_READ };
  },

  async publicAssetGet({ path, ctx }) {
    const asset = await store.findAsset(ctx.sql, path.id);
    if (!asset) throw notFound('No such asset.');
    if (!PUBLIC_ASSET_KINDS.has(asset.kind)) throw forbidden('This asset is not public; read it through /assets/{id}.');
    return assetAnswer(asset, ctx.header('if-none-match'), PUBLIC_CACHE);
  },
};

/** Truncates by code points so a surrogate pair is never split. */
function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  return Array.from(s).slice(0, max).join('');
}
