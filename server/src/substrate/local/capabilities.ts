// The local substrate's capabilities. The gateway program always runs beside it (npm start starts it);
// snapshots are archives under DATA_DIR/snapshots (snapshots.ts); a machine's screen is a real X server,
// Xvnc, where Debian's tigervnc-standalone-server is installed (agent/screen.ts), and otherwise the
// agent's built-in RFB server drawing the machine's text console (agent/text-screen.ts).
import type { SubstrateCapabilities } from '../driver.js';
import { findProgram } from './programs.js';

export function localCapabilities(): SubstrateCapabilities {
  return { snapshots: true, gateway: true, framebuffer: findProgram('Xvnc') ? 'xvnc' : 'text' };
}
