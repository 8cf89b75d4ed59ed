// The schedules area's job (registered at the composition root, server/src/tasks.ts): every minute, the
// due schedules claimed and run (run.ts). A worker that starts after downtime runs one catch-up tick,
// which runs each schedule missed by less than an hour once.
import { HOUR, periodic, type AreaTasks } from '../../jobs/task.js';
import { runDueSchedules } from './run.js';

export const SCHEDULE_TASKS = {
  run_due_schedules: periodic('* * * * *', HOUR, runDueSchedules),
} satisfies AreaTasks;
