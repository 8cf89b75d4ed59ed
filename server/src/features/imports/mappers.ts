import type { components } from '../../../../generated/api.js';
import type { ImportRow } from './store.js';

export type Import = components['schemas']['Import'];

/** By bytes when the total is known and not zero, else by files; null before either is known. */
export function progressOf(row: Pick<ImportRow, 'bytes_transferred' | 'bytes_total' | 'files_transferred' | 'files_total' | 'status'>): number | null {
  if (row.status === 'succeeded') return 100;
  const bytesTotal = row.bytes_total === null ? null : Number(row.bytes_total);
  if (bytesTotal !== null && bytesTotal > 0) {
    return Math.min(100, Math.floor((100 * Number(row.bytes_transferred)) / bytesTotal));
  }
  if (row.files_total !== null && row.files_total > 0) {
    return Math.min(100, Math.floor((100 * row.files_transferred) / row.files_total));
  }
  return row.files_total === 0 ? 100 : null;
}

export function toImport(row: ImportRow): Import {
  return {
    id: row.id,
    host: row.host,
    port: row.port,
    username: row.username,
    remote_path: row.remote_path,
    target_path: row.target_path,
    delete_extraneous: row.delete_extraneous,
    status: row.status,
    cancel_requested: row.cancel_requested,
    bytes_transferred: Number(row.bytes_transferred),
    bytes_total: row.bytes_total === null ? null : Number(row.bytes_total),
    files_transferred: row.files_transferred,
    files_total: row.files_total,
    current_file: row.current_file,
    progress_percent: progressOf(row),
    error: row.error,
    operation_id: row.operation_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
  };
}
