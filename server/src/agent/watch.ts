// Noticing a new contract: fs.watch on the unit directory for speed (the file is replaced by rename, so
// the directory is what to watch), and a short poll because fs.watch misses events on some file systems
// and stops when the directory is replaced. The poll also notices the unit directory is gone.
import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';

export interface UnitWatch {
  close(): void;
}

export function watchUnitDir(
  unitDir: string,
  fileName: string,
  on: {
    /** The file may have changed. */
    change: () => void;
    /** Every poll while the directory is there (after change). */
    tick: () => void;
    /** The directory is gone. */
    gone: () => void;
  },
  pollMs = 1_000,
): UnitWatch {
  let watcher: FSWatcher | null = null;
  try {
    watcher = watch(unitDir, { persistent: false }, (_event, name) => {
      if (name === null || name === fileName) on.change();
    });
    watcher.on('error', () => {
      // The poll carries on alone.
      watcher?.close();
      watcher = null;
    });
  } catch {
    watcher = null;
  }
  const timer = setInterval(() => {
    stat(unitDir).then(
      () => {
        on.change();
        on.tick();
      },
      (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') on.gone();
      },
    );
  }, pollMs);
  return {
    close: () => {
      clearInterval(timer);
      watcher?.close();
    },
  };
}
