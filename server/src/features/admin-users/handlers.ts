// Staff: a user's system permissions (DECISIONS.md §4, `PUT /admin/users/{id}/system-permissions`,
// `manage_users`).
import { recordPlatformEvent } from '../../audit/record.js';
import { requireSystemPermission } from '../../authz/staff.js';
import { sortPermissions } from '../../authz/system-permissions.js';
import { notFound } from '../../http/errors.js';
import type { AreaHandlers } from '../../http/handler.js';
import * as store from './store.js';


export const adminUserHandlers: AreaHandlers<'adminUserPermissionsSet'> = {
  async adminUserPermissionsSet({ path, body, auth, ctx }) {
    await requireSystemPermission(ctx.sql, auth.userId, 'manage_users');
    // Stored in the catalogue's order, so the answer does not depend on the order they were sent in.
    const permissions = sortPermissions(body.permissions);
    const row = await ctx.sql.begin(async (tx) => {
      const updated = await store.setSystemPermissions(tx, path.id, permissions, ctx.clock.now());
      if (!updated) throw notFound('No such user.');
      await recordPlatformEvent(tx, ctx, {
        action: 'staff.permissions_set',
        target: { type: 'user', id: path.id },
        details: { permissions, actor_user_id: auth.userId },
      });
      return updated;
    });
    return {
      status: 200,
      body: { user_id: row.id, system_permissions: row.system_permissions as typeof body.permissions },
    };
  },
};
