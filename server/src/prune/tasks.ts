// The pruning jobs (registered at the composition root, server/src/tasks.ts).
import { DAY, HOUR, MINUTE, periodic, type AreaTasks } from '../jobs/task.js';
import {
  pruneFinishedMail,
  pruneIdempotencyKeys,
  pruneLoginChallenges,
  pruneOAuthFlows,
  pruneRateLimitBuckets,
  pruneSigningKeys,
} from './prune.js';

export const PRUNE_TASKS = {
  prune_rate_limit_buckets: periodic('*/10 * * * *', 10 * MINUTE, pruneRateLimitBuckets),
  prune_login_challenges: periodic('17 * * * *', HOUR, pruneLoginChallenges),
  prune_finished_mail: periodic('37 3 * * *', DAY, pruneFinishedMail),
  prune_signing_keys: periodic('47 3 * * *', DAY, pruneSigningKeys),
  prune_oauth_flows: periodic('27 * * * *', HOUR, pruneOAuthFlows),
  prune_idempotency_keys: periodic('7 * * * *', HOUR, pruneIdempotencyKeys),
} satisfies AreaTasks;
