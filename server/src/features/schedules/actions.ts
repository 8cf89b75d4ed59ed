// What a schedule's run starts (DECISIONS.md §8 "Schedules"): the operation the customer's own request
// would start (features/backups, features/services/power.ts), under the same lease, in the claim's
// transaction; or, for a console line, a check here and the line sent once the claim is committed.
// Each run is audited as what it does, with no user as its actor.
import { randomUUID } from 'node:crypto';
import { recordAuditOf, type AuditActor } from '../../audit/record.js';
import type { Db } from '../../db/client.js';
import { ApiError } from '../../http/errors.js';
import type { TaskContext } from '../../jobs/context.js';
import { startOperation } from '../../operations/engine.js';
import type { BackupOperationInput } from '../../operations/kinds/backup.js';
import { substrateCapabilities } from '../../substrate/capabilities.js';
import { MAX_BACKUPS } from '../backups/handlers.js';
import { defaultBackupName } from '../backups/mappers.js';
import * as backups from '../backups/store.js';
import { listResources } from '../services/store.js';
import type { RunStatus, RunTarget, ScheduleRow } from './store.js';

/** A schedule acts for nobody in particular: its runs are the platform's. */
export const SCHEDULE_ACTOR: AuditActor = { userId: null };

export interface RunStart {
  status: RunStatus | null;
  error: string | null;
  operationId: string | null;
  /** A console line to send to this unit once the claim is committed. */
  consoleUnitId?: string;
}

const failed = (error: string): RunStart => ({ status: 'failed', error, operationId: null });

/** Starts the run's operation in `tx` (the service row locked), or says why it did not. */
export async function startRun(
  tx: Db,
  ctx: TaskContext,
  schedule: ScheduleRow,
  target: RunTarget,
  now: Date,
): Promise<RunStart> {
  const serviceable =
    target.subscription_status === 'active' && ['running', 'stopped'].includes(target.service_status);
  if (!serviceable) {
    return failed(
      `The service cannot be changed now: its subscription is ${target.subscription_status} and the service ${target.service_status}.`,
    );
  }
  if (schedule.action === 'command') return commandTarget(tx, target);
  try {
    return schedule.action === 'backup'
      ? await startBackup(tx, ctx, schedule, target, now)
      : await startPower(tx, schedule.action, target, now);
  } catch (err) {
    // The lease check throws before anything is written: the claim's transaction goes on.
    if (err instanceof ApiError && err.code === 'operation-in-progress') {
      return { status: 'skipped', error: err.detail, operationId: null };
    }
    throw err;
  }
}

async function startPower(
  tx: Db,
  action: 'start' | 'stop' | 'restart',
  target: RunTarget,
  now: Date,
): Promise<RunStart> {
  const op = await startOperation(
    tx,
    { serviceId: target.service_id, resourceId: null, kind: action, input: {}, createdBy: null },
    now,
  );
  await recordAuditOf(tx, { requestId: null, at: now }, SCHEDULE_ACTOR, {
    organizationId: target.organization_id,
    action: `service.power_${action}`,
    target: { type: 'service_instance', id: target.service_id },
    projectId: target.project_id,
    serviceInstanceId: target.service_id,
  });
  return { status: null, error: null, operationId: op.id };
}

async function startBackup(
  tx: Db,
  ctx: TaskContext,
  schedule: ScheduleRow,
  target: RunTarget,
  now: Date,
): Promise<RunStart> {
  const volume = (await listResources(tx, target.service_id)).find((r) => r.kind === 'volume');
  if (
    !target.features.includes('backups') ||
    !substrateCapabilities(ctx.config.substrate).snapshots ||
    !volume
  ) {
    return failed('This service cannot be backed up here.');
  }
  if ((await backups.countBackups(tx, volume.id)) >= MAX_BACKUPS) {
    return failed(`The volume holds ${MAX_BACKUPS} backups, its most (quota-exceeded); delete one.`);
  }
  const id = randomUUID();
  const input: BackupOperationInput = {
    backup_id: id,
    actor: SCHEDULE_ACTOR,
    request_id: null,
    schedule_id: schedule.id,
  };
  // The lease first: a refused start leaves no backup row behind.
  const op = await startOperation(
    tx,
    { serviceId: target.service_id, resourceId: volume.id, kind: 'backup', input, createdBy: null },
    now,
  );
  await backups.insertBackup(
    tx,
    {
      id,
      serviceId: target.service_id,
      volumeId: volume.id,
      name: defaultBackupName(now),
      createdBy: null,
      scheduleId: schedule.id,
    },
    now,
  );
  return { status: null, error: null, operationId: op.id };
}

/** A console line goes to the running workload, as a customer's console would send it. */
async function commandTarget(tx: Db, target: RunTarget): Promise<RunStart> {
  const workload = (await listResources(tx, target.service_id)).find((r) => r.kind === 'workload');
  if (!target.features.includes('console') || !workload) return failed('This service has no console.');
  if (target.service_status !== 'running' || workload.status !== 'running') {
    return failed(`The service is ${target.service_status}: nothing runs to send the command to.`);
  }
  return { status: null, error: null, operationId: null, consoleUnitId: workload.id };
}

/** How long a console may take to end its side after ours (the line was already written). */
const CONSOLE_END_WAIT_MS = 5_000;

/** Sends one line to the unit's console; answers why it could not, or null. */
export async function sendConsoleLine(
  ctx: TaskContext,
  unitId: string,
  line: string,
): Promise<string | null> {
  const stream = await ctx.substrate.openConsole(unitId).catch(() => null);
  if (!stream) return 'The console did not answer: nothing runs to send the command to.';
  // What the console replays is read and dropped: closing on it unread would make the console's write
  // fail, and it drops a viewer whose write failed, with a line it had not read yet.
  stream.on('data', () => undefined);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('The console did not take the command within 10 s.')),
        10_000,
      );
      stream.once('error', reject);
      stream.write(`${line}\n`, (err) => {
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      });
    });
    // Our end follows the line, so the console has read the line once it ends its side in turn.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, CONSOLE_END_WAIT_MS);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      stream.once('end', done);
      stream.once('close', done);
      stream.end();
    });
    return null;
  } catch (err) {
    return (err as Error).message;
  } finally {
    stream.destroy();
  }
}
