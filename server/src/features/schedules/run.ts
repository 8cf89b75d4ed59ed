// Claiming and running due schedules (DECISIONS.md §8 "Schedules"). Each due schedule is claimed in its
// own transaction: the service row locked first (as every operation start locks it, so the two never
// wait on each other's rows in opposite order), then the schedule re-read as still due. A second
// claimer, in this worker or another process, waits on the service row and then finds the schedule
// moved to its next run: each run happens once.
import { recordAuditOf } from '../../audit/record.js';
import type { TaskContext } from '../../jobs/context.js';
import { SCHEDULE_ACTOR, sendConsoleLine, startRun, type RunStart } from './actions.js';
import { dueWithinGrace, nextRunAfter } from './cron.js';
import * as store from './store.js';

const BATCH = 100;

export interface ClaimResult {
  /** Schedules this claimer ran (started, skipped or failed). */
  ran: string[];
  /** Schedules found due but over an hour late: moved on without running. */
  passedOver: string[];
}

/** Claims and runs every schedule due by the task's clock. */
export async function runDueSchedules(ctx: TaskContext): Promise<ClaimResult> {
  const now = ctx.clock.now();
  const result: ClaimResult = { ran: [], passedOver: [] };
  const seen = new Set<string>();
  for (;;) {
    const due = (await store.dueSchedules(ctx.sql, now, BATCH)).filter((d) => !seen.has(d.id));
    if (due.length === 0) return result;
    for (const { id, service_instance_id: serviceId } of due) {
      seen.add(id);
      await claimOne(ctx, id, serviceId, now, result);
    }
  }
}

async function claimOne(
  ctx: TaskContext,
  id: string,
  serviceId: string,
  now: Date,
  result: ClaimResult,
): Promise<void> {
  const claimed = await ctx.sql.begin(async (tx) => {
    const target = await store.lockRunTarget(tx, serviceId);
    const schedule = target && (await store.lockIfDue(tx, id, now));
    if (!target || !schedule) return null;
    const next = nextRunAfter(schedule.cron, schedule.timezone, now);
    // Its latest due time, not its first: a platform down all night runs an hourly schedule once.
    if (!dueWithinGrace(schedule.cron, schedule.timezone, schedule.next_run_at!, now)) {
      await store.recordClaim(tx, id, next, null);
      result.passedOver.push(id);
      return null;
    }
    const start: RunStart = await startRun(tx, ctx, schedule, target, now);
    await store.recordClaim(tx, id, next, { at: now, ...start });
    result.ran.push(id);
    return { schedule, target, start };
  });
  if (!claimed?.start.consoleUnitId) return;
  const { schedule, target, start } = claimed;
  const error = await sendConsoleLine(ctx, start.consoleUnitId!, schedule.command!);
  await ctx.sql.begin(async (tx) => {
    await store.recordOutcome(tx, id, now, error ? 'failed' : 'succeeded', error);
    if (error) return;
    await recordAuditOf(tx, { requestId: null, at: now }, SCHEDULE_ACTOR, {
      organizationId: target.organization_id,
      action: 'service.command_sent',
      target: { type: 'service_instance', id: target.service_id },
      projectId: target.project_id,
      serviceInstanceId: target.service_id,
    });
  });
  ctx.log.info({ schedule: id, ok: !error }, 'schedule sent its console line');
}
