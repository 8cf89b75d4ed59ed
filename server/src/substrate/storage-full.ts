// A full disk or a spent quota (ENOSPC, EDQUOT), told apart from other failures wherever the platform
// writes for a customer (issue 33): the file paths answer it as 507 `insufficient-storage`, operations
// fail at once rather than retry (operations/permanent.ts).

/** ENOSPC or EDQUOT, as an errno code or in a program's own words (tee, tar, zstd say it on stderr). */
export function isStorageFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') return true;
  const message = err instanceof Error ? err.message : '';
  return /No space left on device|Disk quota exceeded/i.test(message);
}

export const STORAGE_FULL_DETAIL =
  'The disk holding the volume is full or its quota is spent; nothing of this write was kept.';
