// Staff routes for public content (DECISIONS.md §4, admin routes table; `manage_public_content`):
// incidents, maintenance windows, resellers with their icon and OG image, and captcha configurations
// per hostname. What they write is what the public reads (features/public/) answer, so each route ends
// at a public read: GET /public/incidents, /public/maintenances, /public/resellers/by-host/{hostname},
// /public/captcha/config/{hostname}. Every write records a platform event with its actor, in its own
// transaction; every refusal comes before anything is written.
import type { Db } from '../../db/client.js';
import { actorOf, recordPlatformEvent } from '../../audit/record.js';
import { requireSystemPermission } from '../../authz/staff.js';
import { invalidFieldValue, notFound } from '../../http/errors.js';
import type { AreaHandlers, RequestContext, SessionAuth, TokenAuth } from '../../http/handler.js';
import { normalizeImage } from '../../images/normalize.js';
import {
  createAsset,
  createIncident,
  createMaintenance,
  createReseller,
  deleteAsset,
  upsertCaptchaConfig,
  type ResellerRow,
} from '../public/store.js';
import { brandColorOf, DEFAULT_VERIFY_URLS, hostnameOf, instantOf, longText, shortText } from './inputs.js';
import {
  PLATFORM_HOSTNAME,
  toAdminCaptchaConfig,
  toAdminIncident,
  toAdminMaintenance,
  toAdminReseller,
} from './mappers.js';
import * as store from './store.js';

const PERMISSION = 'manage_public_content';
/** Reseller images: the icon as every uploaded icon (512×512), the OG image as link previews want it. */
const IMAGES = {
  icon: { kind: 'reseller_icon', size: 512, height: 512, column: 'icon_asset_id' },
  og_image: { kind: 'reseller_og_image', size: 1200, height: 630, column: 'og_image_asset_id' },
} as const;

type StaffAuth = SessionAuth | TokenAuth;

/** A platform event of this area, naming who did it (the user, and the API token if one was used). */
async function event(
  tx: Db,
  ctx: RequestContext,
  auth: StaffAuth,
  action: string,
  target: { type: string; id: string | null },
  details: Record<string, unknown> = {},
): Promise<void> {
  const actor = actorOf(auth);
  await recordPlatformEvent(tx, ctx, {
    action,
    target,
    details: { ...details, actor_user_id: actor.userId, actor_token_id: actor.tokenId ?? null },
  });
}

/** The names of the fields whose value differs, in the order given. */
function changedFields<T extends object>(before: T, after: T): (keyof T)[] {
  return (Object.keys(after) as (keyof T)[]).filter((k) => {
    const [a, b] = [before[k], after[k]];
    return a instanceof Date && b instanceof Date ? a.getTime() !== b.getTime() : a !== b;
  });
}

async function uploadResellerImage(
  which: keyof typeof IMAGES,
  input: { path: { id: string }; body: { file: { bytes: Buffer } }; auth: StaffAuth; ctx: RequestContext },
): Promise<ResellerRow> {
  const { path, body, auth, ctx } = input;
  const spec = IMAGES[which];
  await requireSystemPermission(ctx.sql, auth.userId, PERMISSION);
  // An unknown reseller costs no decode.
  if (!(await store.resellerExists(ctx.sql, path.id))) throw notFound('No such reseller.');
  const image = await normalizeImage(body.file.bytes, {
    size: spec.size,
    height: spec.height,
    log: ctx.log,
    requestId: ctx.requestId,
  });
  return ctx.sql.begin(async (tx) => {
    const current = await store.lockReseller(tx, path.id);
    if (!current) throw notFound('No such reseller.');
    const now = ctx.clock.now();
    const asset = await createAsset(
      tx,
      { kind: spec.kind, contentType: image.contentType, bytes: image.bytes },
      now,
    );
    const updated = await store.setResellerImage(tx, current.id, which, asset.id);
    const previous = current[spec.column];
    if (previous) await deleteAsset(tx, previous, spec.kind);
    await event(
      tx,
      ctx,
      auth,
      `reseller.${which}_updated`,
      { type: 'reseller', id: current.id },
      { asset_id: asset.id },
    );
    return updated;
  });
}

export const adminContentHandlers: AreaHandlers<
  | 'adminIncidentCreate'
  | 'adminIncidentUpdate'
  | 'adminIncidentResolve'
  | 'adminMaintenanceCreate'
  | 'adminMaintenanceCancel'
  | 'adminResellerCreate'
  | 'adminResellerUpdate'
  | 'adminResellerIconUpload'
  | 'adminResellerOgImageUpload'
  | 'adminCaptchaConfigSet'
  | 'adminCaptchaConfigDelete'
> = {
  async adminIncidentCreate({ body, auth, ctx }) {
    await requireSystemPermission(ctx.sql, auth.userId, PERMISSION);
    const title = shortText(body.title, '/title');
    const message = longText(body.message, '/message');
    const now = ctx.clock.now();
    const startedAt = body.started_at === undefined ? now : instantOf(body.started_at, '/started_at');
    const row = await ctx.sql.begin(async (tx) => {
      const created = await createIncident(tx, { title, message, startedAt }, now);
      await event(tx, ctx, auth, 'incident.opened', { type: 'incident', id: created.id }, { title });
      return created;
    });
    return { status: 201, body: toAdminIncident(row) };
  },

  async adminIncidentUpdate({ path, body, auth, ctx }) {
    await requireSystemPermission(ctx.sql, auth.userId, PERMISSION);
    const title = body.title === undefined ? undefined : shortText(body.title, '/title');
    const message = body.message === undefined ? undefined : longText(body.message, '/message');
    const startedAt = body.started_at === undefined ? undefined : instantOf(body.started_at, '/started_at');
    const row = await ctx.sql.begin(async (tx) => {
      const current = await store.lockIncident(tx, path.id);
      if (!current) throw notFound('No such incident.');
      const next = {
        title: title ?? current.title,
        message: message === undefined ? current.message : message,
        startedAt: startedAt ?? current.started_at,
      };
      if (current.resolved_at && next.startedAt > current.resolved_at) {
        throw invalidFieldValue('An incident cannot start after it was resolved.', [
          {
            location: 'body',
            pointer: '/started_at',
            message: `after resolved_at ${current.resolved_at.toISOString()}`,
          },
        ]);
      }
      const before = { title: current.title, message: current.message, startedAt: current.started_at };
      const changed = changedFields(before, next);
      if (changed.length === 0) return current;
      const updated = await store.updateIncident(tx, current.id, next);
      await event(tx, ctx, auth, 'incident.updated', { type: 'incident', id: current.id }, { changed });
      return updated;
    });
    return { status: 200, body: toAdminIncident(row) };
  },

  async adminIncidentResolve({ path, auth, ctx }) {
    await requireSystemPermission(ctx.sql, auth.userId, PERMISSION);
    const row = await ctx.sql.begin(async (tx) => {
      const current = await store.lockIncident(tx, path.id);
      if (!current) throw notFound('No such incident.');
      if (current.resolved_at) return current;
      const resolved = await store.setIncidentResolved(tx, current.id, ctx.clock.now());
      await event(tx, ctx, auth, 'incident.resolved', { type: 'incident', id: current.id });
      return resolved;
    });
    return { status: 200, body: toAdminIncident(row) };
  },

  async adminMaintenanceCreate({ body, auth, ctx }) {
    await requireSystemPermission(ctx.sql, auth.userId, PERMISSION);
    const title = shortText(body.title, '/title');
    const scheduledAt = instantOf(body.scheduled_at, '/scheduled_at');
    const row = await ctx.sql.begin(async (tx) => {
      const created = await createMaintenance(
        tx,
        { title, scheduledAt, expectedDurationMinutes: body.expected_duration_minutes ?? null },
        ctx.clock.now(),
      );
      await event(tx, ctx, auth, 'maintenance.scheduled', { type: 'maintenance', id: created.id }, { title });
      return created;
    });
    return { status: 201, body: toAdminMaintenance(row) };
  },

  async adminMaintenanceCancel({ path, auth, ctx }) {
    await requireSystemPermission(ctx.sql, auth.userId, PERMISSION);
    const row = await ctx.sql.begin(async (tx) => {
      const current = await store.lockMaintenance(tx, path.id);
      if (!current) throw notFound('No such maintenance window.');
      if (current.cancelled_at) return current;
      const cancelled = await store.setMaintenanceCancelled(tx, current.id, ctx.clock.now());
      await event(tx, ctx, auth, 'maintenance.cancelled', { type: 'maintenance', id: current.id });
      return cancelled;
    });
    return { status: 200, body: toAdminMaintenance(row) };
  },

  async adminResellerCreate({ body, auth, ctx }) {
    await requireSystemPermission(ctx.sql, auth.userId, PERMISSION);
    const hostname = hostnameOf(body.hostname);
    const input = {
      name: shortText(body.name, '/name'),
      hostname,
      brand_color: brandColorOf(body.brand_color),
      custom_plan_selector_enabled: body.custom_plan_selector_enabled ?? false,
      og_image_mode: body.og_image_mode ?? 'platform',
      discord_invite_url: body.discord_invite_url ?? null,
      enabled: body.enabled ?? true,
      icon_asset_id: null,
      og_image_asset_id: null,
    };
    const row = await store.takingHostname(hostname, () =>
      ctx.sql.begin(async (tx) => {
        const created = await createReseller(tx, input, ctx.clock.now());
        await event(tx, ctx, auth, 'reseller.created', { type: 'reseller', id: created.id }, { hostname });
        return created;
      }),
    );
    return { status: 201, body: toAdminReseller(row) };
  },

  async adminResellerUpdate({ path, body, auth, ctx }) {
    await requireSystemPermission(ctx.sql, auth.userId, PERMISSION);
    const name = body.name === undefined ? undefined : shortText(body.name, '/name');
    const hostname = body.hostname === undefined ? undefined : hostnameOf(body.hostname);
    const row = await store.takingHostname(hostname ?? '', () =>
      ctx.sql.begin(async (tx) => {
        const current = await store.lockReseller(tx, path.id);
        if (!current) throw notFound('No such reseller.');
        const before: store.ResellerChanges = {
          name: current.name,
          hostname: current.hostname,
          brand_color: current.brand_color,
          custom_plan_selector_enabled: current.custom_plan_selector_enabled,
          og_image_mode: current.og_image_mode,
          discord_invite_url: current.discord_invite_url,
          enabled: current.enabled,
        };
        const next: store.ResellerChanges = {
          name: name ?? before.name,
          hostname: hostname ?? before.hostname,
          brand_color: body.brand_color === undefined ? before.brand_color : brandColorOf(body.brand_color),
          custom_plan_selector_enabled:
            body.custom_plan_selector_enabled ?? before.custom_plan_selector_enabled,
          og_image_mode: body.og_image_mode ?? before.og_image_mode,
          discord_invite_url:
            body.discord_invite_url === undefined ? before.discord_invite_url : body.discord_invite_url,
          enabled: body.enabled ?? before.enabled,
        };
        const changed = changedFields(before, next);
        if (changed.length === 0) return current;
        const updated = await store.updateReseller(tx, current.id, next);
        await event(
          tx,
          ctx,
          auth,
          'reseller.updated',
          { type: 'reseller', id: current.id },
          { changed, enabled: next.enabled },
        );
        return updated;
      }),
    );
    return { status: 200, body: toAdminReseller(row) };
  },

  async adminResellerIconUpload(input) {
    return { status: 200, body: toAdminReseller(await uploadResellerImage('icon', input)) };
  },

  async adminResellerOgImageUpload(input) {
    return { status: 200, body: toAdminReseller(await uploadResellerImage('og_image', input)) };
  },

  async adminCaptchaConfigSet({ path, body, auth, ctx }) {
    await requireSystemPermission(ctx.sql, auth.userId, PERMISSION);
    const hostname = path.hostname === PLATFORM_HOSTNAME ? null : hostnameOf(path.hostname);
    const verifyUrl = body.verify_url ?? DEFAULT_VERIFY_URLS[body.provider] ?? null;
    if (verifyUrl === null) {
      throw invalidFieldValue('A custom provider needs the verify_url its challenges are checked at.', [
        { location: 'body', pointer: '/verify_url', message: 'required for provider custom' },
      ]);
    }
    const siteKey = body.site_key.trim();
    if (siteKey.length === 0) {
      throw invalidFieldValue('The site key must not be blank.', [
        { location: 'body', pointer: '/site_key', message: 'blank' },
      ]);
    }
    // Sealed before the transaction: only the sealed value is ever held next to the database.
    const sealed = body.secret === undefined ? undefined : await ctx.box.seal('captcha-secret', body.secret);
    const row = await ctx.sql.begin(async (tx) => {
      const current = await store.lockCaptchaConfig(tx, hostname);
      const secretSealed = sealed ?? current?.secret_sealed ?? null;
      if (body.enabled && secretSealed === null) {
        throw invalidFieldValue("An enabled configuration needs the provider's secret.", [
          {
            location: 'body',
            pointer: '/secret',
            message: 'required: no secret is stored for this hostname',
          },
        ]);
      }
      const saved = await upsertCaptchaConfig(
        tx,
        {
          hostname,
          provider: body.provider,
          site_key: siteKey,
          secret_sealed: secretSealed,
          verify_url: verifyUrl,
          enabled: body.enabled,
          protected_actions: body.protected_actions,
        },
        ctx.clock.now(),
      );
      await event(
        tx,
        ctx,
        auth,
        'captcha.config_set',
        { type: 'captcha_config', id: saved.id },
        {
          hostname: hostname ?? PLATFORM_HOSTNAME,
          enabled: body.enabled,
          provider: body.provider,
          protected_actions: body.protected_actions,
          secret_replaced: sealed !== undefined,
        },
      );
      return saved;
    });
    return { status: 200, body: toAdminCaptchaConfig(row) };
  },

  async adminCaptchaConfigDelete({ path, auth, ctx }) {
    await requireSystemPermission(ctx.sql, auth.userId, PERMISSION);
    const hostname = path.hostname === PLATFORM_HOSTNAME ? null : hostnameOf(path.hostname);
    await ctx.sql.begin(async (tx) => {
      const current = await store.lockCaptchaConfig(tx, hostname);
      if (!current) throw notFound('This hostname has no captcha configuration of its own.');
      await store.deleteCaptchaConfig(tx, hostname);
      await event(
        tx,
        ctx,
        auth,
        'captcha.config_deleted',
        { type: 'captcha_config', id: current.id },
        {
          hostname: hostname ?? PLATFORM_HOSTNAME,
        },
      );
    });
    return { status: 204 };
  },
};
