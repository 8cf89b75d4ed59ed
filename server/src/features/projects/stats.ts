// Project stats (document 1, "Project stats"): what each project holds and is charged for now. Both
// routes read through one statement (store.listProjectStats), so the list costs one query whatever
// the number of projects.
import { reachesProject } from '../../authz/reach.js';
import type { AreaHandlers } from '../../http/handler.js';
import { projectNotFound } from './access.js';
import { toProjectStats } from './mappers.js';
import * as store from './store.js';

// Every role holds `projects.read`, so membership (the join in the statement) and the caller's reach
// are the whole check.
export const projectStatsHandlers: AreaHandlers<'projectStatsList' | 'projectStatsGet'> = {
  async projectStatsList({ auth, ctx }) {
    const rows = await store.listProjectStats(ctx.sql, auth.userId, ctx.clock.now());
    const inReach = rows.filter((r) => reachesProject(auth.reach, r.organization_id, r.project_id));
    return { status: 200, body: inReach.map(toProjectStats) };
  },

  async projectStatsGet({ path, auth, ctx }) {
    const [row] = await store.listProjectStats(ctx.sql, auth.userId, ctx.clock.now(), { projectId: path.id });
    if (!row || !reachesProject(auth.reach, row.organization_id, row.project_id)) throw projectNotFound();
    return { status: 200, body: toProjectStats(row) };
  },
};
