// Backup and restore of a service's volume (document 2 §3 backup rows, §4 "Backups"; DECISIONS.md §6
// "Backups"), each an operation holding the service. A backup is one phase, `snapshot`, while the service
// keeps running; a restore stops the units (`stopping`), reverts the volume from the verified archive
// (`reverting`) and starts again what ran (`starting`), its backup's `restore_phase` following along.
// Progress is by bytes, written at most a few times a second.
import { recordAuditOf, type AuditActor } from '../../audit/record.js';
import type { Db } from '../../db/client.js';
import { flushWorld } from '../../games/block/world-flush.js';
import type { TaskContext } from '../../jobs/context.js';
import { SnapshotIntegrityError, type SnapshotInfo, type TransferOptions } from '../../substrate/driver.js';
import { markRotated } from '../../features/backups/store.js';
import { enqueue } from '../../jobs/queue.js';
import { OperationError } from '../errors.js';
import type { OperationDefinition } from '../run.js';
import type { OperationRow } from '../store.js';
import { loadPowerState, startUnits, stopUnits, type PowerState } from './power.js';

/** What features/backups hands a backup or restore operation: the backup, and who asked, for the audit. */
export type BackupOperationInput = {
  backup_id: string;
  actor: AuditActor;
  /** Null for a schedule's run: no request asked. */
  request_id: string | null;
  /** A schedule's run: once ready, that schedule's oldest backups beyond its `keep` go. */
  schedule_id?: string;
};

interface BackupRef {
  id: string;
  volume_id: string;
  service_instance_id: string;
  project_id: string;
  organization_id: string;
  size_bytes: string | null;
  sha256: string | null;
}

async function loadBackup(ctx: TaskContext, op: OperationRow): Promise<BackupRef> {
  const [backup] = await ctx.sql<BackupRef[]>`
    select b.id, b.volume_id, b.service_instance_id, s.project_id, p.organization_id, b.size_bytes, b.sha256
    from service_backups b
    join service_instances s on s.id = b.service_instance_id
    join projects p on p.id = s.project_id
    where b.id = ${String(op.input.backup_id)}`;
  if (!backup) throw new Error(`operation ${op.id}: its backup is gone`);
  return backup;
}

/** Audited on success only, in the transaction that records it, as done by the caller who asked. */
async function auditSuccess(
  tx: Db,
  input: Record<string, unknown>,
  backup: BackupRef,
  action: 'backup.created' | 'backup.restored',
  now: Date,
): Promise<void> {
  const { actor, request_id: requestId } = input as Partial<BackupOperationInput>;
  await recordAuditOf(tx, { requestId: requestId ?? null, at: now }, actor ?? { userId: null }, {
    organizationId: backup.organization_id,
    action,
    target: { type: 'backup', id: backup.id },
    projectId: backup.project_id,
    serviceInstanceId: backup.service_instance_id,
  });
}

/** Reports bytes done as progress_percent between `from` and `to`, at most every 250 ms. */
function progressOf(ctx: TaskContext, operationId: string, from: number, to: number): TransferOptions {
  let shown = from;
  let at = 0;
  let writing: Promise<unknown> = Promise.resolve();
  return {
    onProgress(done, total) {
      if (total <= 0) return;
      const percent = Math.min(to, Math.floor(from + ((to - from) * done) / total));
      if (percent <= shown || Date.now() - at < 250) return;
      shown = percent;
      at = Date.now();
      // Only while running: a late write never touches the finished operation's 100.
      writing = writing
        .then(
          () => ctx.sql`
            update service_operations set progress_percent = ${percent}, updated_at = ${ctx.clock.now()}
            where id = ${operationId} and status = 'running' and progress_percent < ${percent}`,
        )
        .catch(() => undefined);
    },
  };
}

interface BackupState {
  operationId: string;
  input: Record<string, unknown>;
  backup: BackupRef;
  made: SnapshotInfo | null;
}

export const backup: OperationDefinition<BackupState> = {
  async load(ctx, op) {
    return { operationId: op.id, input: op.input, backup: await loadBackup(ctx, op), made: null };
  },
  phases: [
    {
      name: 'snapshot',
      progress: 1,
      async run(s, ctx) {
        // A running game's world is written out first, and not written while it is archived.
        const release = await flushWorld(ctx, s.backup.service_instance_id);
        try {
          s.made = await ctx.substrate.createSnapshot(
            { id: s.backup.id, volumeId: s.backup.volume_id },
            progressOf(ctx, s.operationId, 1, 99),
          );
        } finally {
          await release();
        }
      },
    },
  ],
  async complete(tx: Db, s, now) {
    const made = await tx`
      update service_backups
      set status = 'ready', size_bytes = ${s.made!.sizeBytes}, sha256 = ${s.made!.sha256}, completed_at = ${now}
      where id = ${s.backup.id} and status = 'creating'
      returning 1`;
    if (made.length === 0) return;
    await auditSuccess(tx, s.input, s.backup, 'backup.created', now);
    const scheduleId = (s.input as Partial<BackupOperationInput>).schedule_id;
    if (scheduleId) {
      for (const id of await markRotated(tx, scheduleId, now)) await enqueue(tx, 'delete_backup', { backup_id: id });
    }
  },
  async fail(tx: Db, op, now) {
    await tx`
      update service_backups set status = 'failed', completed_at = ${now}
      where id = ${String(op.input.backup_id)} and status = 'creating'`;
  },
};

interface RestoreState extends PowerState {
  operationId: string;
  input: Record<string, unknown>;
  backup: BackupRef;
}

export const restore: OperationDefinition<RestoreState> = {
  async load(ctx, op) {
    return {
      ...(await loadPowerState(ctx, op)),
      operationId: op.id,
      input: op.input,
      backup: await loadBackup(ctx, op),
    };
  },
  phases: [
    {
      name: 'stopping',
      progress: 5,
      async run(s, ctx) {
        await stopUnits(s, ctx);
      },
    },
    {
      name: 'reverting',
      progress: 10,
      async run(s, ctx) {
        const expected = { sizeBytes: Number(s.backup.size_bytes), sha256: s.backup.sha256 ?? '' };
        try {
          await ctx.substrate.restoreSnapshot(
            { id: s.backup.id, volumeId: s.backup.volume_id },
            expected,
            progressOf(ctx, s.operationId, 10, 90),
          );
        } catch (err) {
          if (!(err instanceof SnapshotIntegrityError)) throw err;
          // Never restored, never offered again: the backup is failed, the volume as it was.
          await ctx.sql`
            update service_backups set status = 'failed', restore_phase = null
            where id = ${s.backup.id} and status = 'restoring'`;
          throw new OperationError(`${err.message} The volume was left as it was.`, true);
        }
      },
    },
    {
      name: 'starting',
      progress: 95,
      async run(s, ctx) {
        // What ran before runs again; a stopped (or meanwhile suspended) service stays as it is.
        const [service] = await ctx.sql<{ status: string }[]>`
          select status from service_instances where id = ${s.service.id}`;
        if (service?.status === 'running') await startUnits(s, ctx);
      },
    },
  ],
  async entered(s, phase, ctx) {
    await ctx.sql`
      update service_backups set restore_phase = ${phase} where id = ${s.backup.id} and status = 'restoring'`;
  },
  async complete(tx: Db, s, now) {
    const restored = await tx`
      update service_backups set status = 'ready', restore_phase = null
      where id = ${s.backup.id} and status = 'restoring'
      returning 1`;
    if (restored.length > 0) await auditSuccess(tx, s.input, s.backup, 'backup.restored', now);
  },
  async fail(tx: Db, op) {
    // A restore that failed otherwise leaves the backup restorable; the service's converge (enqueued
    // when the operation ends) starts again what should run.
    await tx`
      update service_backups set status = 'ready', restore_phase = null
      where id = ${String(op.input.backup_id)} and status = 'restoring'`;
  },
};
