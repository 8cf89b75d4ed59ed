// The domains area's jobs (registered at the composition root, server/src/tasks.ts).
import { MINUTE, periodic, type AreaTasks } from '../../jobs/task.js';
import { recheckDomains } from './recheck.js';

export const DOMAIN_TASKS = {
  // Each run a batch of verified and lost claims not checked for an hour, oldest first.
  recheck_domains: periodic('*/15 * * * *', 15 * MINUTE, async (ctx) => {
    await recheckDomains(ctx);
  }),
} satisfies AreaTasks;
