// The game subdomains area's job (registered at the composition root, server/src/tasks.ts): publishing
// the records of a row that could not be published when it was made. A failed attempt marks the row
// `failed` with the reason and schedules the next one itself, backing off from 1 s to 10 minutes, so
// the row keeps trying (and turns `active`) however long the wait, which the queue's bounded attempts
// would not.
import type { PublishGameSubdomainPayload } from '../../jobs/payloads.js';
import type { TaskContext } from '../../jobs/context.js';
import { enqueue } from '../../jobs/queue.js';
import type { AreaTasks } from '../../jobs/task.js';
import * as store from './store.js';

const MAX_BACKOFF_MS = 10 * 60_000;
export const retryDelayMs = (attempts: number): number =>
  Math.min(1000 * 2 ** Math.max(0, attempts - 1), MAX_BACKOFF_MS);
export const jobKeyOf = (id: string) => `publish_game_subdomain:${id}`;

async function publish(payload: PublishGameSubdomainPayload, ctx: TaskContext): Promise<void> {
  await ctx.sql.begin(async (tx) => {
    const row = await store.lockUnpublished(tx, payload.id);
    if (!row) return;
    const records = await store.primaryAllocation(tx, row.service_instance_id);
    if (records) {
      await store.markPublished(tx, row.id, records, ctx.clock.now());
      return;
    }
    const attempts = await store.markFailed(
      tx,
      row.id,
      'The service has no primary allocation to point the records at.',
    );
    await enqueue(
      tx,
      'publish_game_subdomain',
      { id: row.id },
      { delayMs: retryDelayMs(attempts), jobKey: jobKeyOf(row.id) },
    );
  });
}

export const GAME_SUBDOMAIN_TASKS = {
  publish_game_subdomain: { run: (payload, ctx) => publish(payload as PublishGameSubdomainPayload, ctx) },
} satisfies AreaTasks;
