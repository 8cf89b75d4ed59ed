// A workload's console on the LXD substrate. The agent serves it inside the instance on an abstract Unix
// socket, which exists only in the instance's network namespace: a small bridge run there by an exec
// (the image's node, a few lines passed with -e) reads console.json, attaches with the key and copies
// bytes between the socket and its pipes, which LXD carries as WebSockets. Chosen over a proxy device
// from a host socket because it works on any member of a remote cluster through the API alone, needs no
// device (so no instance update) per viewer, and the key never leaves the instance.
import { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { UNIT_FILES } from '../local/layout.js';
import type { LxdClient } from './client.js';
import { startExec, type ExecSession } from './exec-session.js';

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
export async function openLxdConsole(client: LxdClient, instance: string, unitDir: string): Promise<Duplex | null> {
  let session: ExecSession;
  try {
    session = await startExec(client, instance, {
      command: ['/usr/bin/node', '-e', BRIDGE, `${unitDir}/${UNIT_FILES.console}`],
      environment: { PATH: '/bin:/usr/bin' },
      interactive: false,
    });
  } catch {
    // Not running, or gone: as the local substrate, no console.
    return null;
  }
  const stderr = session.streams['2']!;
  // Listening from the start: the scrollback may come before the bridge's `ready`.
  const stream = consoleStream(session, session.streams['0']!, session.streams['1']!);
  const ready = await new Promise<boolean>((resolve) => {
    let said = '';
    stderr.on('message', (data: Buffer) => {
      said += data.toString('utf8');
      if (said.includes('ready\n')) resolve(true);
    });
    void session.exit.then(() => resolve(false));
    stderr.once('close', () => resolve(false));
  });
  if (!ready) {
    stream.destroy();
    return null;
  }
  return stream;
}

function consoleStream(session: ExecSession, stdin: WebSocket, stdout: WebSocket): Duplex {
  const stream = new Duplex({
    write(chunk: Buffer, _encoding, callback) {
      if (stdin.readyState !== stdin.OPEN) return callback(new Error('the console is closed'));
      stdin.send(chunk, { binary: true }, callback);
    },
    read() {
      stdout.resume();
    },
    destroy(err, callback) {
      session.close();
      callback(err);
    },
  });
  stdout.on('message', (data: Buffer, isBinary: boolean) => {
    // LXD marks the end of a stream with an empty text frame before it closes the socket.
    if (!isBinary && data.length === 0) return;
    if (!stream.push(data)) stdout.pause();
  });
  let ended = false;
  const end = () => {
    if (!ended) stream.push(null);
    ended = true;
  };
  stdout.once('close', end);
  return stream;
}
