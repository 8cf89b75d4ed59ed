// Operations that hold their service but have no job that can still run them: the job was given up by
// the queue (its failure could not even be recorded: the database was down through every attempt) or
// never existed. Left alone, the service would answer 409 to every later operation for ever; queued
// again, the operation resumes at its recorded phase like after any restart.
import type { TaskContext } from '../jobs/context.js';
import { enqueue } from '../jobs/queue.js';
import { OPERATION_ATTEMPTS } from './engine.js';

/** A job not seen running this long after its operation last moved is looked at. */
export const STRANDED_AFTER_MS = 5 * 60_000;

export async function requeueStrandedOperations(ctx: TaskContext): Promise<number> {
  const stale = new Date(ctx.clock.now().getTime() - STRANDED_AFTER_MS);
  const rows = await ctx.sql<{ id: string }[]>`
    select o.id from service_leases l join service_operations o on o.id = l.operation_id
    where o.status in ('queued', 'running') and o.updated_at < ${stale}
      and not exists (
        select 1 from graphile_worker.jobs j
        where j.key = 'operation:' || o.id::text and (j.locked_at is not null or j.attempts < j.max_attempts)
      )
    order by o.updated_at
    limit 100`;
  for (const { id } of rows) {
    await enqueue(
      ctx.sql,
      'run_operation',
      { operation_id: id },
      { jobKey: `operation:${id}`, maxAttempts: OPERATION_ATTEMPTS },
    );
  }
  if (rows.length > 0)
    ctx.log.warn({ operations: rows.length }, 'operations without a runnable job were queued again');
  return rows.length;
}
