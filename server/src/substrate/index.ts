// Picks the substrate driver named by SUBSTRATE (DECISIONS.md §5).
// What a driver can do without starting it is capabilities.ts.
import { readFileSync } from 'node:fs';
import type { LxdConfig } from '../config.js';
import type { DriverName, SubstrateDriver } from './driver.js';
import { createLocalDriver } from './local/driver.js';
import { createLxdDriver } from './lxd/driver.js';

export interface SubstrateOptions {
  dataDir: string;
  /** The cluster of SUBSTRATE=lxd (config.lxd). */
  lxd?: LxdConfig;
}

export function createSubstrate(name: DriverName, options: SubstrateOptions): SubstrateDriver {
  switch (name) {
    case 'local':
      return createLocalDriver(options);
    case 'lxd': {
      const lxd = options.lxd;
      if (!lxd) throw new Error('SUBSTRATE=lxd needs the LXD_* configuration');
      return createLxdDriver({
        dataDir: options.dataDir,
        pool: lxd.pool,
        target: lxd.target ?? undefined,
        volumeAccess: lxd.volumeAccess,
        connection: {
          url: lxd.url,
          project: lxd.project,
          cert: lxd.certFile ? readFileSync(lxd.certFile, 'utf8') : undefined,
          key: lxd.keyFile ? readFileSync(lxd.keyFile, 'utf8') : undefined,
          ca: lxd.serverCertFile ? readFileSync(lxd.serverCertFile, 'utf8') : undefined,
        },
      });
    }
    case 'kubernetes':
      throw new Error(
        'SUBSTRATE=kubernetes is not built yet: it waits until tests can reach a Kubernetes API server ' +
          '(SUBSTRATE.md); use SUBSTRATE=local or SUBSTRATE=lxd',
      );
  }
}
