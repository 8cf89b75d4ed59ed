// All SQL of the organization audit log: one page of entries and the count of every matching entry,
// read in one statement so that both come from the same snapshot. Only `audit_entries` is read:
// platform-internal events live in `platform_events` and never reach this list (seed "Audit and domains").
import type { Db } from '../../db/client.js';

export interface AuditRow {
  id: string;
  actor_user_id: string | null;
  actor_token_id: string | null;
  actor_application_id: string | null;
  acting_as_user_id: string | null;
  action: string;
  target_type: string;
  target_id: string | null;
  project_id: string | null;
  service_instance_id: string | null;
  request_id: string | null;
  created_at: Date;
}

export interface AuditFilter {
  organizationId: string;
  /** Exact match. */
  action?: string | undefined;
  /** These two only narrow: absent, every entry qualifies. */
  projectId?: string | undefined;
  serviceInstanceId?: string | undefined;
}

export interface AuditPage {
  /** Every entry the filter matches, whatever the page. */
  total: number;
  rows: AuditRow[];
}

function matching(db: Db, f: AuditFilter) {
  return db`
    a.organization_id = ${f.organizationId}
    ${f.action !== undefined ? db`and a.action = ${f.action}` : db``}
    ${f.projectId !== undefined ? db`and a.project_id = ${f.projectId}` : db``}
    ${f.serviceInstanceId !== undefined ? db`and a.service_instance_id = ${f.serviceInstanceId}` : db``}`;
}

/**
 * Most recent first (created_at, then id, both descending: a stable order for entries of the same
 * instant). The count is a one-row subquery the page is joined to, so a page beyond the end still
 * answers the total (one row of nulls), which `count(*) over ()` on the page alone could not.
 */
export async function listAuditEntries(
  db: Db,
  filter: AuditFilter,
  window: { limit: number; offset: number },
): Promise<AuditPage> {
  const rows = await db<(Partial<AuditRow> & { total: number; seq?: string })[]>`
    select t.total, e.*
    from (select count(*)::int as total from audit_entries a where ${matching(db, filter)}) t
    left join lateral (
      select a.id, a.seq, a.actor_user_id, a.actor_token_id, a.actor_application_id, a.acting_as_user_id, a.action,
             a.target_type, a.target_id, a.project_id, a.service_instance_id, a.request_id, a.created_at
      from audit_entries a
      where ${matching(db, filter)}
      order by a.created_at desc, a.seq desc
      limit ${window.limit} offset ${window.offset}::bigint
    ) e on true
    order by e.created_at desc, e.seq desc`;
  const total = rows[0]?.total ?? 0;
  const entries = rows.filter((r): r is AuditRow & { total: number; seq: string } => r.id != null);
  return { total, rows: entries.map(({ total: _total, seq: _seq, ...row }) => row) };
}
