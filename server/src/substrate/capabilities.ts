// What the configured substrate can do, known without starting its driver: the API answers the
// seeds' 404s for a missing gateway or framebuffer from this (SUBSTRATE.md "Two drivers, one interface").
import type { DriverName, SubstrateCapabilities } from './driver.js';
import { localCapabilities } from './local/capabilities.js';

export function substrateCapabilities(name: DriverName): SubstrateCapabilities {
  switch (name) {
    case 'local':
      return localCapabilities();
    case 'kubernetes':
      return { snapshots: false, gateway: false, framebuffer: false };
  }
}
