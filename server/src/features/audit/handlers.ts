// The organization audit log (seed document 1, "Audit and domains", "Audit entry"): Owners and Admins
// read it (403 for other members); a non-member is told 404, exactly as for an unknown organization.
import { requireMembership } from '../../authz/organization-access.js';
import type { AreaHandlers } from '../../http/handler.js';
import { toAuditEntry } from './mappers.js';
import { pageMeta, pageWindow } from './paging.js';
import * as store from './store.js';

export const auditHandlers: AreaHandlers<'organizationAuditList'> = {
  async organizationAuditList({ path, query, auth, ctx }) {
    await requireMembership(ctx.sql, path.id, auth, 'audit.read');
    const window = pageWindow(query.page, query.page_size);
    const { total, rows } = await store.listAuditEntries(
      ctx.sql,
      {
        organizationId: path.id,
        action: query.action,
        projectId: query.project_id,
        serviceInstanceId: query.service_instance_id,
      },
      { limit: window.pageSize, offset: window.offset },
    );
    return { status: 200, body: { data: rows.map(toAuditEntry), meta: pageMeta(window, total) } };
  },
};
