// The sign-in area's jobs (registered at the composition root, server/src/tasks.ts): the
// account-dependent halves of sign-up and forgot-password (account-jobs.ts).
import type { AreaTasks } from '../../jobs/task.js';
import type { CompleteSignupPayload, SendPasswordResetPayload } from '../../jobs/payloads.js';
import { completeSignup, sendPasswordReset } from './account-jobs.js';

export const AUTH_TASKS = {
  complete_signup: { run: (payload, ctx) => completeSignup(payload as CompleteSignupPayload, ctx) },
  send_password_reset: { run: (payload, ctx) => sendPasswordReset(payload as SendPasswordResetPayload, ctx) },
} satisfies AreaTasks;
