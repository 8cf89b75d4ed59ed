// Project stats (document 1, "Project stats"): what each project holds and is charged for now. Both
// routes read through one statement (store.listProjectStats), so the list costs one query whatever
// the number of projects.
import type { AreaHandlers } from '../../http/handler.js';
import { projectNotFound } from './access.js';
import { toProjectStats } from './mappers.js';
import * as store from './store.js';

// Every role holds `projects.read`, so membership (the join in the statement) is the whole check.
export const projectStatsHandlers: AreaHandlers<'projectStatsList' | 'projectStatsGet'> = {
  async projectStatsList({ auth, ctx }) {
    const rows = await store.listProjectStats(ctx.sql, auth.userId, ctx.clock.now());
    return { status: 200, body: rows.map(toProjectStats) };
  },

  async projectStatsGet({ path, auth, ctx }) {
    const [row] = await store.listProjectStats(ctx.sql, auth.userId, ctx.clock.now(), { projectId: path.id });
    if (!row) throw projectNotFound();
    return { status: 200, body: toProjectStats(row) };
  },
};
