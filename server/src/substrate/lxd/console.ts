// A workload's console on the LXD substrate. The agent serves it inside the instance on an abstract Unix
// socket, which exists only in the instance's network namespace: the bridge (exec-bridge.ts) reads
// console.json, attaches with the key (which so never leaves the instance) and copies bytes both ways.
import type { Duplex } from 'node:stream';
import { UNIT_FILES } from '../local/layout.js';
import type { LxdClient } from './client.js';
import { openExecBridge } from './exec-bridge.js';

// Says `ready` on stderr once attached; exits 3 when the unit has no console (no program runs).
const BRIDGE = `
const fs = require('node:fs'), net = require('node:net');
let e;
try { e = JSON.parse(fs.readFileSync(process.argv[1], 'utf8')); } catch { process.exit(3); }
const s = net.connect({ path: '\\0' + e.name });
s.once('error', () => process.exit(3));
s.once('connect', () => {
  s.write(e.key + '\\n');
  process.stderr.write('ready\\n');
  s.pipe(process.stdout);
  process.stdin.pipe(s);
});
s.once('close', () => process.exit(0));
`;

/** The console's bytes both ways (the scrollback first), or null when the unit has none now. */
export function openLxdConsole(client: LxdClient, instance: string, unitDir: string): Promise<Duplex | null> {
  return openExecBridge(client, instance, BRIDGE, [`${unitDir}/${UNIT_FILES.console}`]);
}
