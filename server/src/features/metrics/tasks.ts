// The metrics area's jobs (registered at the composition root, server/src/tasks.ts): the sampler, whose
// minute tick samples the minute's six 10-second slots, and the 5-minute rollup with pruning.
import { MINUTE, periodic, type AreaTasks } from '../../jobs/task.js';
import { rollUpAndPrune, sampleMinute } from './sampler.js';

export const METRICS_TASKS = {
  sample_usage: periodic('* * * * *', MINUTE, sampleMinute),
  roll_up_usage: periodic('*/5 * * * *', 10 * MINUTE, rollUpAndPrune),
} satisfies AreaTasks;
