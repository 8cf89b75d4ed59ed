// Organizations (document 1, "Organizations", "Organization standing"): the caller's organizations,
// creating, renaming, deleting, the billing country, the icon and the standing. Every organization-
// scoped route resolves the caller's membership first, so a non-member gets the 404 of an unknown id
// (seed "Authentication": anti-enumeration); every write records its audit entry in its transaction.
import { randomUUID } from 'node:crypto';
import { actorOf, recordAudit, recordPlatformEvent } from '../../audit/record.js';
import { organizationNotFound, requireMembership } from '../../authz/organization-access.js';
import { reachesOrganization } from '../../authz/reach.js';
import { can } from '../../authz/roles.js';
import { forbidden, rateLimited, unprocessable } from '../../http/errors.js';
import type { AreaHandlers } from '../../http/handler.js';
import { normalizeImage } from '../../images/normalize.js';
import { hit, type Limit } from '../../ratelimit/limiter.js';
import { requireCountryCode } from '../me/countries.js';
import { createAsset, deleteAsset } from '../public/store.js';
import { toOrganization } from './mappers.js';
import { displayName } from './names.js';
import { standingOf, toCents } from './standing.js';
import * as store from './store.js';

/** The avatar's number (the seeds fix none), counted per caller in a bucket of its own. */
const ICON_UPLOADS_PER_USER: Limit = { name: 'organization-icon-upload:user', max: 10, windowSeconds: 10 * 60 };
const ICON_SIZE = 512;
const ICON_KIND = 'organization_icon';
const organizationTarget = (id: string) => ({ type: 'organization', id });

export const organizationHandlers: AreaHandlers<
  | 'organizationList'
  | 'organizationCreate'
  | 'organizationGet'
  | 'organizationGetBySlug'
  | 'organizationUpdate'
  | 'organizationDelete'
  | 'organizationBillingCountrySet'
  | 'organizationIconUpload'
  | 'organizationIconDelete'
  | 'organizationStandingGet'
> = {
  async organizationList({ auth, ctx }) {
    const rows = await store.listForUser(ctx.sql, auth.userId);
    const inReach = rows.filter((row) => reachesOrganization(auth.reach, row.id));
    return { status: 200, body: inReach.map((row) => toOrganization(row, row.role)) };
  },

  async organizationCreate({ body, auth, ctx }) {
    // A new organization is in no grant's scope yet: only an account-wide grant may make one.
    if (!auth.reach.all) throw forbidden('This API token manages only the organizations it names; it cannot create one.');
    const name = displayName(body.name);
    const organization = await ctx.sql.begin(async (tx) => {
      const row = await store.createOrganization(
        tx,
        { id: randomUUID(), name, slug: body.slug, ownerId: auth.userId },
        ctx.clock.now(),
      );
      await recordAudit(tx, ctx, actorOf(auth), {
        organizationId: row.id,
        action: 'organization.created',
        target: organizationTarget(row.id),
      });
      return row;
    });
    return { status: 201, body: toOrganization(organization, 'owner') };
  },

  async organizationGet({ path, auth, ctx }) {
    const { organization, role } = await requireMembership(ctx.sql, path.id, auth, 'organization.read');
    return { status: 200, body: toOrganization(organization, role) };
  },

  async organizationGetBySlug({ path, auth, ctx }) {
    const row = await store.findBySlugForUser(ctx.sql, path.slug, auth.userId);
    if (!row || !reachesOrganization(auth.reach, row.id)) throw organizationNotFound();
    return { status: 200, body: toOrganization(row, row.role) };
  },

  async organizationUpdate({ path, body, auth, ctx }) {
    const name = body.name == null ? null : displayName(body.name);
    const { organization, role } = await ctx.sql.begin(async (tx) => {
      const m = await requireMembership(tx, path.id, auth, 'organization.manage', { lock: true });
      const next = { name: name ?? m.organization.name, slug: body.slug ?? m.organization.slug };
      // Giving the values it already has changes nothing, so it is no change, even of a personal one.
      if (next.name === m.organization.name && next.slug === m.organization.slug) return m;
      if (m.organization.personal_owner_id !== null) {
        throw unprocessable('organization-personal', 'A personal organization keeps its name and slug.');
      }
      const updated = await store.updateOrganization(tx, m.organization.id, next, ctx.clock.now());
      await recordAudit(tx, ctx, actorOf(auth), {
        organizationId: updated.id,
        action: 'organization.updated',
        target: organizationTarget(updated.id),
      });
      return { organization: updated, role: m.role };
    });
    return { status: 200, body: toOrganization(organization, role) };
  },

  async organizationDelete({ path, auth, ctx }) {
    await ctx.sql.begin(async (tx) => {
      // The lock orders this after any project insert already under way (its foreign key holds a
      // share lock on the row), so the count below sees it.
      const { organization: o } = await requireMembership(tx, path.id, auth, 'organization.delete', { lock: true });
      if (o.personal_owner_id !== null) {
        throw unprocessable('organization-personal', 'A personal organization cannot be deleted; it goes with its account.');
      }
      const projects = await store.countProjects(tx, o.id);
      if (projects > 0) {
        throw unprocessable('organization-not-empty', `The organization still holds ${projects} project(s); delete them first.`, 'projects');
      }
      const { balance } = await store.findWallet(tx, o.id);
      if (toCents(balance) !== 0n) {
        throw unprocessable('organization-not-empty', `The organization's wallet holds a balance (${balance} EUR); settle it first.`, 'balance');
      }
      // Its audit entries go with it, so the deletion is kept as a platform event.
      await recordPlatformEvent(tx, ctx, {
        organizationId: o.id,
        action: 'organization.deleted',
        target: organizationTarget(o.id),
        details: { actor_user_id: auth.userId, name: o.name, slug: o.slug },
      });
      await store.deleteOrganization(tx, o.id);
      if (o.icon_asset_id) await deleteAsset(tx, o.icon_asset_id, ICON_KIND);
    });
    return { status: 204 };
  },

  async organizationBillingCountrySet({ path, body, auth, ctx }) {
    const { organization, role } = await ctx.sql.begin(async (tx) => {
      const m = await requireMembership(tx, path.id, auth, 'organization.manage', { lock: true });
      const code = requireCountryCode(body.country_code, '/country_code');
      const current = m.organization.billing_country_code;
      if (current === code) return m;
      if (current !== null) {
        throw unprocessable('billing-country-already-set', `The billing country is set once; it is ${current}.`);
      }
      const updated = await store.setBillingCountry(tx, m.organization.id, code, ctx.clock.now());
      await recordAudit(tx, ctx, actorOf(auth), {
        organizationId: updated.id,
        action: 'organization.billing_country_set',
        target: organizationTarget(updated.id),
      });
      return { organization: updated, role: m.role };
    });
    return { status: 200, body: toOrganization(organization, role) };
  },

  async organizationIconUpload({ path, body, auth, ctx }) {
    // Refused before the upload is decoded: a non-member gets the 404 of an unknown id, and costs nothing.
    await requireMembership(ctx.sql, path.id, auth, 'organization.manage');
    const limit = await hit(ctx.sql, ICON_UPLOADS_PER_USER, auth.userId, ctx.clock.now());
    if (!limit.allowed) throw rateLimited(limit.retryAfterSeconds);
    const image = await normalizeImage(body.file.bytes, { size: ICON_SIZE, log: ctx.log, requestId: ctx.requestId });
    const { organization, role } = await ctx.sql.begin(async (tx) => {
      // Again under the lock: the role may have changed while the image was decoded.
      const m = await requireMembership(tx, path.id, auth, 'organization.manage', { lock: true });
      const now = ctx.clock.now();
      const asset = await createAsset(
        tx,
        { kind: ICON_KIND, contentType: 'image/webp', bytes: image.bytes, organizationId: m.organization.id },
        now,
      );
      const updated = await store.setIcon(tx, m.organization.id, asset.id, now);
      if (m.organization.icon_asset_id) await deleteAsset(tx, m.organization.icon_asset_id, ICON_KIND);
      await recordAudit(tx, ctx, actorOf(auth), {
        organizationId: updated.id,
        action: 'organization.icon_updated',
        target: organizationTarget(updated.id),
      });
      return { organization: updated, role: m.role };
    });
    return { status: 200, body: toOrganization(organization, role) };
  },

  async organizationIconDelete({ path, auth, ctx }) {
    await ctx.sql.begin(async (tx) => {
      const { organization: o } = await requireMembership(tx, path.id, auth, 'organization.manage', { lock: true });
      // No icon: nothing changes, so nothing is recorded.
      if (!o.icon_asset_id) return;
      await store.setIcon(tx, o.id, null, ctx.clock.now());
      await deleteAsset(tx, o.icon_asset_id, ICON_KIND);
      await recordAudit(tx, ctx, actorOf(auth), {
        organizationId: o.id,
        action: 'organization.icon_removed',
        target: organizationTarget(o.id),
      });
    });
    return { status: 204 };
  },

  async organizationStandingGet({ path, auth, ctx }) {
    const { organization, role } = await requireMembership(ctx.sql, path.organization_id, auth, 'standing.read');
    const wallet = await store.findWallet(ctx.sql, organization.id);
    return { status: 200, body: standingOf(wallet, can(role, 'standing.detail')) };
  },
};
