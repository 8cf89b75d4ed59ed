// What the LXD substrate can do: LXD's own snapshots; consoles and shells through the gateway (exec
// streams into the instance). Containers show no screen, so the screen routes answer as for a substrate
// without one.
import type { SubstrateCapabilities } from '../driver.js';

export function lxdCapabilities(): SubstrateCapabilities {
  return { snapshots: true, gateway: true, framebuffer: false };
}
