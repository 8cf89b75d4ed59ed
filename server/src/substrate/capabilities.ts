// What the configured substrate can do, known without starting its driver: the API answers the
// seeds' 404s for a missing gateway or framebuffer from this (SUBSTRATE.md "Two drivers, one interface").
import type { DriverName, SubstrateCapabilities } from './driver.js';
import { localCapabilities } from './local/capabilities.js';
import { lxdCapabilities } from './lxd/capabilities.js';
import { offeredShells } from './local/shell.js';
import { LXD_SHELLS } from './lxd/shell.js';

export function substrateCapabilities(name: DriverName): SubstrateCapabilities {
  switch (name) {
    case 'local':
      return localCapabilities();
    case 'lxd':
      return lxdCapabilities();
    case 'kubernetes':
      return { snapshots: false, gateway: false, framebuffer: false };
  }
}

/** The shells units' images offer on this substrate, in the order tried (a shell ticket's `shells`). */
export function substrateShells(name: DriverName): string[] {
  if (name === 'local') return offeredShells();
  return name === 'lxd' ? [...LXD_SHELLS] : [];
}

/** The containers a unit runs on this substrate, the default first (a shell ticket's `container`). */
export function substrateContainers(name: DriverName): string[] {
  return name === 'kubernetes' ? [] : ['main'];
}
