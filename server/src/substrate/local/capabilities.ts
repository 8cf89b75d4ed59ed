// The local substrate's capabilities. The gateway program always runs beside it (npm start starts it);
// snapshots are archives under DATA_DIR/snapshots (snapshots.ts).
import type { SubstrateCapabilities } from '../driver.js';

export function localCapabilities(): SubstrateCapabilities {
  // TODO(framebuffer): arrives with the screen slice.
  return { snapshots: true, gateway: true, framebuffer: false };
}
