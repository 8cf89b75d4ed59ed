// Application reads (document 1, "Application reads"): registered applications, as themselves, read
// users' public profiles and find the user behind a linked provider account. Profiles never carry an
// email. Only the application caller kind reaches these handlers (x-callers, http/bind.ts).
import type { components } from '../../../../generated/api.js';
import { invalidFieldValue, notFound } from '../../http/errors.js';
import type { AreaHandlers } from '../../http/handler.js';
import { findLinkedUser, findProfiles, type ProfileRow } from './store.js';
import { isUuid } from '../../http/uuid.js';

const LOOKUP_MAX = 100;

const toProfile = (r: ProfileRow): components['schemas']['ApplicationUserProfile'] => ({
  id: r.id,
  name: r.name,
  avatar_asset_id: r.avatar_asset_id,
  deleted_at: r.deleted_at?.toISOString() ?? null,
});

export const applicationHandlers: AreaHandlers<
  'applicationUsersLookup' | 'applicationUserByOauthAccount' | 'applicationUserGet'
> = {
  async applicationUsersLookup({ body, ctx }) {
    // Repeats collapse (uuids compare case-insensitively); a string that is no uuid names no account.
    const distinct = [...new Set(body.ids.map((id) => id.toLowerCase()))];
    if (distinct.length > LOOKUP_MAX) {
      throw invalidFieldValue(`At most ${LOOKUP_MAX} distinct ids per lookup; this one has ${distinct.length}.`, [
        { location: 'body', pointer: '/ids', message: `more than ${LOOKUP_MAX} distinct ids` },
      ]);
    }
    const rows = await findProfiles(ctx.sql, distinct.filter((id) => isUuid(id)));
    const byId = new Map(rows.map((r) => [r.id, r]));
    // In the order asked, each once.
    const users = distinct.flatMap((id) => (byId.has(id) ? [toProfile(byId.get(id)!)] : []));
    return { status: 200, body: { users } };
  },

  async applicationUserByOauthAccount({ query, ctx }) {
    const row = await findLinkedUser(ctx.sql, query.provider, query.provider_user_id);
    if (!row) throw notFound('No user has linked that account.');
    return { status: 200, body: { display_name: row.name, language_tag: row.language, user_id: row.user_id } };
  },

  async applicationUserGet({ path, ctx }) {
    const [row] = await findProfiles(ctx.sql, [path.id.toLowerCase()]);
    if (!row) throw notFound('No such user.');
    return { status: 200, body: toProfile(row) };
  },
};
