// The local substrate's capabilities. The gateway program always runs beside it (npm start starts it).
import type { SubstrateCapabilities } from '../driver.js';

export function localCapabilities(): SubstrateCapabilities {
  // TODO(snapshots): arrives with the backups issue. TODO(framebuffer): arrives with the screen slice.
  return { snapshots: false, gateway: true, framebuffer: false };
}
