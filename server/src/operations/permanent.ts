// Failures that retrying cannot mend (issue 33 item 2): a full disk, a program that is not installed,
// an archive that is not what was made. The queue's retries (eight, with backoff, about half an hour) are
// for what passes by itself; these fail the operation at once with a sentence saying why.
import { SnapshotIntegrityError } from '../substrate/driver.js';
import { isStorageFull } from '../substrate/storage-full.js';

/** The customer's sentence for a failure that is permanent, or null when a retry may succeed. */
export function permanentFailure(err: unknown): string | null {
  if (isStorageFull(err)) {
    return 'The disk it writes to is full (no space left on device or quota exceeded); free space and try again.';
  }
  const e = err as NodeJS.ErrnoException | null;
  if (e?.code === 'ENOENT' && typeof e.syscall === 'string' && e.syscall.startsWith('spawn ')) {
    return `A program the platform needs (${e.syscall.slice('spawn '.length)}) is not installed on the host.`;
  }
  if (err instanceof SnapshotIntegrityError) return err.message;
  return null;
}
