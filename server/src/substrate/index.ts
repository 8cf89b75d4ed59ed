// Picks the substrate driver named by SUBSTRATE (DECISIONS.md §5).
// What a driver can do without starting it is capabilities.ts.
import type { DriverName, SubstrateDriver } from './driver.js';
import { createLocalDriver, type LocalDriverOptions } from './local/driver.js';

export function createSubstrate(name: DriverName, options: LocalDriverOptions): SubstrateDriver {
  switch (name) {
    case 'local':
      return createLocalDriver(options);
    case 'kubernetes':
      throw new Error(
        'SUBSTRATE=kubernetes is not built yet: it waits until tests can reach a Kubernetes API server ' +
          '(SUBSTRATE.md); use SUBSTRATE=local',
      );
  }
}
