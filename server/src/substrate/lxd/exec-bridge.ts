// A socket that exists only inside an instance (the agent's console and screen: an abstract socket lives
// in the instance's network namespace, a screen's in its file system), reached from here by a few lines of
// the image's node run there by an exec: the lines find and connect to the socket, say `ready` on stderr,
// and copy bytes between it and their pipes, which LXD carries as WebSockets. Chosen over a proxy device
// from a host socket because it works on any member of a remote cluster through the API alone, needs no
// device (so no instance update) per viewer, and nothing of the endpoint leaves the instance.
import { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { LxdClient } from './client.js';
import { startExec, type ExecSession } from './exec-session.js';

/**
 * The bridge's bytes both ways once it says `ready`, or null when it ends first (the script exits with a
 * code of its own when the instance has nothing to attach to) or the instance does not run.
 */
export async function openExecBridge(
  client: LxdClient,
  instance: string,
  script: string,
  args: string[],
): Promise<Duplex | null> {
  let session: ExecSession;
  try {
    session = await startExec(client, instance, {
      command: ['/usr/bin/node', '-e', script, ...args],
      environment: { PATH: '/bin:/usr/bin' },
      interactive: false,
    });
  } catch {
    // Not running, or gone: as the local substrate, nothing to attach to.
    return null;
  }
  const stderr = session.streams['2']!;
  // Listening from the start: what the socket says first (a console's scrollback, a screen's
  // ProtocolVersion) may come before the bridge's `ready`.
  const stream = bridgeStream(session, session.streams['0']!, session.streams['1']!);
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

function bridgeStream(session: ExecSession, stdin: WebSocket, stdout: WebSocket): Duplex {
  const stream = new Duplex({
    // As a socket: the bridge's end ends (and closes) the whole stream, which the gateway waits for.
    allowHalfOpen: false,
    write(chunk: Buffer, _encoding, callback) {
      if (stdin.readyState !== stdin.OPEN) return callback(new Error('the bridge is closed'));
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
  // LXD closes the streams once the command is gone, also when the instance is stopped under it (forced).
  stdout.once('close', end);
  return stream;
}
