// Picks the substrate driver named by SUBSTRATE (DECISIONS.md §5).
import type { DriverName, SubstrateCapabilities, SubstrateDriver } from './driver.js';
import { createLocalDriver, LOCAL_CAPABILITIES, type LocalDriverOptions } from './local/driver.js';

/** What the named driver can do, known without starting it (the API process asks, the worker acts). */
export function substrateCapabilities(name: DriverName): SubstrateCapabilities {
  switch (name) {
    case 'local':
      return LOCAL_CAPABILITIES;
    case 'kubernetes':
      return { snapshots: false, gateway: false, framebuffer: false };
  }
}

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
