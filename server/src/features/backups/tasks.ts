// The backups area's jobs (registered at the composition root, server/src/tasks.ts): a deleted backup's
// snapshot removed from the substrate, then its row.
import type { DeleteBackupPayload } from '../../jobs/payloads.js';
import type { AreaTasks } from '../../jobs/task.js';
import type { TaskContext } from '../../jobs/context.js';

async function deleteBackup(payload: DeleteBackupPayload, ctx: TaskContext): Promise<void> {
  const [backup] = await ctx.sql<{ id: string; volume_id: string }[]>`
    select id, volume_id from service_backups where id = ${payload.backup_id} and deleted_at is not null`;
  if (!backup) return;
  await ctx.substrate.deleteSnapshot({ id: backup.id, volumeId: backup.volume_id });
  await ctx.sql`delete from service_backups where id = ${backup.id} and deleted_at is not null`;
}

export const BACKUP_TASKS = {
  delete_backup: { run: (payload, ctx) => deleteBackup(payload as DeleteBackupPayload, ctx) },
} satisfies AreaTasks;
