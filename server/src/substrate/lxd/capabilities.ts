// What the LXD substrate can do today: LXD's own snapshots. Consoles, shells and screens through the
// gateway and the file routes are not built on it yet (README "The LXD substrate"), so their routes answer
// as for a substrate without them.
import type { SubstrateCapabilities } from '../driver.js';

export function lxdCapabilities(): SubstrateCapabilities {
  return { snapshots: true, gateway: false, framebuffer: false };
}
