// The mail area's jobs (registered at the composition root, server/src/tasks.ts).
import { MINUTE, periodic, type AreaTasks } from '../jobs/task.js';
import { requeueStrandedMail, sendMailTask } from './sender.js';

export const MAIL_TASKS = {
  send_mail: { run: sendMailTask },
  requeue_stranded_mail: periodic('*/5 * * * *', 5 * MINUTE, requeueStrandedMail),
} satisfies AreaTasks;
