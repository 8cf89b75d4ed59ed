// What killed uploads leave (issue 33 item 3): a gateway killed with -9 mid-upload cannot remove its
// temporary file, so every gateway sweeps the volumes when it starts and hourly after. Only files whose
// writer is gone or that sat untouched for an hour go (files/temporaries.ts): another gateway's live
// upload on the same database is left alone.
import type { Logger } from 'pino';
import type { Sql } from '../db/client.js';
import type { SubstrateDriver } from '../substrate/driver.js';
import { liveVolumeIds } from './store.js';

export const SWEEP_EVERY_MS = 60 * 60 * 1000;

export async function sweepUploadLeftovers(
  sql: Sql,
  substrate: Pick<SubstrateDriver, 'volumeFiles'>,
  log: Pick<Logger, 'info' | 'warn'>,
): Promise<number> {
  let removed = 0;
  for (const volumeId of await liveVolumeIds(sql)) {
    const files = substrate.volumeFiles(volumeId);
    if (!files) continue;
    // One volume that cannot be read (not made yet, its host away) must not stop the others' sweep.
    removed += await files.streams.sweepTemporaries().catch((err: unknown) => {
      log.warn({ volume: volumeId, code: (err as NodeJS.ErrnoException).code }, 'could not sweep upload leftovers');
      return 0;
    });
  }
  if (removed > 0) log.info({ removed }, 'removed temporary files of uploads that were cut off');
  return removed;
}
