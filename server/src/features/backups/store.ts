// All SQL of backups (document 2 §4 "Backups"; DECISIONS.md §6 "Backups").
import type { Db } from '../../db/client.js';

export type BackupStatus = 'creating' | 'ready' | 'failed' | 'restoring';
export type RestorePhase = 'stopping' | 'reverting' | 'starting';

export interface BackupRow {
  id: string;
  service_instance_id: string;
  volume_id: string;
  name: string;
  status: BackupStatus;
  restore_phase: RestorePhase | null;
  /** bigint, as postgres.js reads it. */
  size_bytes: string | null;
  sha256: string | null;
  created_at: Date;
  completed_at: Date | null;
}

const COLUMNS = `b.id, b.service_instance_id, b.volume_id, b.name, b.status, b.restore_phase, b.size_bytes, b.sha256,
  b.created_at, b.completed_at`;

/** The volume's live backups, newest first. */
export async function listBackups(db: Db, volumeId: string): Promise<BackupRow[]> {
  return db<BackupRow[]>`
    select ${db.unsafe(COLUMNS)} from service_backups b
    where b.volume_id = ${volumeId} and b.deleted_at is null
    order by b.created_at desc, b.id desc`;
}

export async function countBackups(db: Db, volumeId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from service_backups where volume_id = ${volumeId} and deleted_at is null`;
  return row!.n;
}

export async function findBackup(db: Db, volumeId: string, backupId: string): Promise<BackupRow | undefined> {
  const [row] = await db<BackupRow[]>`
    select ${db.unsafe(COLUMNS)} from service_backups b
    where b.id = ${backupId} and b.volume_id = ${volumeId} and b.deleted_at is null`;
  return row;
}

export async function insertBackup(
  db: Db,
  backup: {
    id: string;
    serviceId: string;
    volumeId: string;
    name: string;
    createdBy: string | null;
    /** The schedule that made it: rotation deletes only a schedule's own backups. */
    scheduleId?: string | null;
  },
  now: Date,
): Promise<BackupRow> {
  const [row] = await db<BackupRow[]>`
    insert into service_backups as b (id, service_instance_id, volume_id, name, status, created_by, schedule_id, created_at)
    values (${backup.id}, ${backup.serviceId}, ${backup.volumeId}, ${backup.name}, 'creating', ${backup.createdBy},
            ${backup.scheduleId ?? null}, ${now})
    returning ${db.unsafe(COLUMNS)}`;
  return row!;
}

/** Marks the backup restoring (its first phase); answers it as it now reads. */
export async function markRestoring(db: Db, backupId: string): Promise<BackupRow> {
  const [row] = await db<BackupRow[]>`
    update service_backups b set status = 'restoring', restore_phase = 'stopping'
    where b.id = ${backupId} and b.status = 'ready'
    returning ${db.unsafe(COLUMNS)}`;
  return row!;
}

/** Deleted for the customer at once; its snapshot is removed by the delete_backup job. */
export async function markDeleted(db: Db, backupId: string, now: Date): Promise<boolean> {
  const rows = await db`
    update service_backups set deleted_at = ${now}
    where id = ${backupId} and deleted_at is null and status in ('ready', 'failed')
    returning 1`;
  return rows.length > 0;
}

/**
 * A schedule's rotation, once its newest backup is ready: its own ready backups beyond its `keep`,
 * oldest first, deleted as a customer's delete would (the delete_backup job removes the snapshots).
 * Answers the ids marked; a schedule deleted since keeps what it made.
 */
export async function markRotated(db: Db, scheduleId: string, now: Date): Promise<string[]> {
  const rows = await db<{ id: string }[]>`
    update service_backups set deleted_at = ${now}
    where id in (
      select b.id from service_backups b join service_schedules s on s.id = b.schedule_id
      where b.schedule_id = ${scheduleId} and b.deleted_at is null and b.status = 'ready' and s.keep is not null
      order by b.created_at desc, b.id desc
      offset (select keep from service_schedules where id = ${scheduleId}))
    returning id`;
  return rows.map((r) => r.id);
}
