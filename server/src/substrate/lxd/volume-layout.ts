// The local substrate's volume code (images.ts, access.ts) pointed at one volume's directory, wherever
// that is: a member's directory on this machine, or the volume host instance's mount (volume-server/).
import { dirname, join } from 'node:path';
import type { LocalLayout } from '../local/layout.js';

export function oneVolumeLayout(volumeDir: string, dataDir: string): LocalLayout {
  return {
    dataDir,
    volumesDir: dirname(volumeDir),
    unitsDir: join(dataDir, 'none'),
    snapshotsDir: join(dataDir, 'none'),
    volumeDir: () => volumeDir,
    unitDir: () => {
      throw new Error('units of the LXD substrate live in their instances');
    },
    snapshotFile: () => {
      throw new Error('snapshots of the LXD substrate are LXD snapshots');
    },
  };
}
