// A machine's screen on the LXD substrate: the agent inside the instance runs the built-in text screen
// (the image has no Xvnc: agent/text-screen.ts) on a unix socket in a private directory of the instance's
// /tmp that screen.json names, as on the local substrate. The bridge (exec-bridge.ts) reads screen.json
// there and copies RFB's bytes both ways, one bridge per viewer as the local substrate gives one socket.
import type { Duplex } from 'node:stream';
import { UNIT_FILES } from '../local/layout.js';
import { SCREEN_SOCKET } from '../local/screen.js';
import type { LxdClient } from './client.js';
import { openExecBridge } from './exec-bridge.js';

// Says `ready` on stderr once connected; exits 3 when the machine shows no screen (none started yet).
const BRIDGE = `
const fs = require('node:fs'), net = require('node:net'), path = require('node:path');
let e;
try { e = JSON.parse(fs.readFileSync(process.argv[1], 'utf8')); } catch { process.exit(3); }
if (typeof e.dir !== 'string') process.exit(3);
const s = net.connect({ path: path.join(e.dir, process.argv[2]) });
s.once('error', () => process.exit(3));
s.once('connect', () => {
  process.stderr.write('ready\\n');
  s.pipe(process.stdout);
  process.stdin.pipe(s);
});
s.once('close', () => process.exit(0));
`;

/** A stream of the machine's RFB server (it speaks first), or null when it shows none now. */
export function openLxdScreen(client: LxdClient, instance: string, unitDir: string): Promise<Duplex | null> {
  return openExecBridge(client, instance, BRIDGE, [`${unitDir}/${UNIT_FILES.screen}`, SCREEN_SOCKET]);
}
