// The certificates' jobs (registered at the composition root, server/src/tasks.ts): one attempt for a
// name (enqueued when the name is attached, and again for each retry), and a periodic sweep that
// enqueues the names whose retry or renewal is due by the app's clock — names added by any route, and
// retries a stopped worker never ran, are found by it.
import type { IssueCertificatePayload } from '../jobs/payloads.js';
import { enqueue } from '../jobs/queue.js';
import { MINUTE, periodic, type AreaTasks } from '../jobs/task.js';
import { certifyHttpName } from './issuance.js';
import * as store from './issuance-store.js';

export const issueJobKey = (id: string) => `issue_certificate:${id}`;
/** Names the sweep enqueues per run; the rest wait for the next minute. */
const SWEEP_BATCH = 100;

export const CERTIFICATE_TASKS = {
  issue_certificate: {
    run: async (payload, ctx) => {
      await certifyHttpName(ctx, (payload as IssueCertificatePayload).id);
    },
  },
  renew_certificates: periodic('* * * * *', 10 * MINUTE, async (ctx) => {
    const due = await store.dueHttpNames(ctx.sql, ctx.clock.now(), SWEEP_BATCH);
    for (const { id } of due) {
      await enqueue(ctx.sql, 'issue_certificate', { id }, { jobKey: issueJobKey(id), maxAttempts: 1 });
    }
  }),
} satisfies AreaTasks;
