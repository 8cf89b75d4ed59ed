// What the LXD substrate can do: LXD's own snapshots; consoles, shells and screens through the gateway
// (exec streams into the instance). The unit image has no Xvnc, so a machine's agent draws the built-in
// text screen (agent/text-screen.ts).
import type { SubstrateCapabilities } from '../driver.js';

export function lxdCapabilities(): SubstrateCapabilities {
  return { snapshots: true, gateway: true, framebuffer: 'text' };
}
