// Rows to the wire shapes of spec/components/schemas/backups.yaml.
import type { components } from '../../../../generated/api.js';
import type { BackupRow } from './store.js';

export function toBackup(b: BackupRow): components['schemas']['Backup'] {
  return {
    id: b.id,
    name: b.name,
    status: b.status,
    restore_phase: b.restore_phase,
    size_bytes: b.size_bytes === null ? null : Number(b.size_bytes),
    created_at: b.created_at.toISOString(),
    completed_at: b.completed_at?.toISOString() ?? null,
  };
}

/** `backup-YYYYMMDD-HHMMSS` in UTC (DECISIONS.md §6 "Backups"). */
export function defaultBackupName(now: Date): string {
  const iso = now.toISOString();
  return `backup-${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}`;
}
