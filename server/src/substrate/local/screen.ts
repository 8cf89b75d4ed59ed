// A machine's screen on this host: the RFB socket of the Xvnc its agent runs (agent/screen.ts), named in
// the unit's screen.json. The socket lives in a private directory of its own under the system's temp
// directory (mode 0700, the socket 0600; a unix socket path must fit 107 bytes, which a unit directory
// under a deep DATA_DIR does not): only this user, the gateway's, reaches it, which is why Xvnc may
// offer the security type None.
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { readIfPresent } from './atomic-file.js';
import { UNIT_FILES } from './layout.js';

/** screen.json: written by the agent once Xvnc accepts clients. */
export interface ScreenEndpoint {
  /** The private directory holding `rfb.sock` and the X cookie. */
  dir: string;
  pid: number;
  /** Xvnc runs in the unit's sandbox: `pid` is its reaper, and the socket is reached through its root. */
  confined?: boolean;
}

export const SCREEN_SOCKET = 'rfb.sock';

export async function readScreenEndpoint(unitDir: string): Promise<ScreenEndpoint | null> {
  const text = await readIfPresent(join(unitDir, UNIT_FILES.screen)).catch(() => null);
  if (text === null) return null;
  try {
    const endpoint = JSON.parse(text) as ScreenEndpoint;
    return typeof endpoint.dir === 'string' && Number.isInteger(endpoint.pid) ? endpoint : null;
  } catch {
    return null;
  }
}

/** A socket to the machine's RFB server (speaking first: its ProtocolVersion), or null when none runs. */
export async function openScreen(unitDir: string): Promise<Socket | null> {
  const endpoint = await readScreenEndpoint(unitDir);
  if (!endpoint) return null;
  return new Promise((resolve) => {
    const path = endpoint.confined
      ? `/proc/${endpoint.pid}/root/${SCREEN_SOCKET}`
      : join(endpoint.dir, SCREEN_SOCKET);
    const socket = connect({ path });
    socket.once('error', () => resolve(null));
    socket.once('connect', () => {
      socket.removeAllListeners('error');
      resolve(socket);
    });
  });
}
