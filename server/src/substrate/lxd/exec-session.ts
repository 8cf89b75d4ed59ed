// A command run in an instance with its streams live: LXD's exec with `wait-for-websocket`, one WebSocket
// per stream plus the control one (signals, window size). The way consoles and shells reach a unit on any
// member of the cluster, over the same connection as the rest of the API (a unix socket here, HTTPS with
// the client certificate for a remote cluster), never a shell-out to `lxc`.
import type { WebSocket } from 'ws';
import { LxdError, type LxdClient, type LxdOperation } from './client.js';

export interface ExecRequest {
  command: string[];
  environment: Record<string, string>;
  /** A PTY (one stream both ways, `0`) rather than pipes (`0` stdin, `1` stdout, `2` stderr). */
  interactive: boolean;
  width?: number;
  height?: number;
  cwd?: string;
}

export interface ExecSession {
  /** The streams by file descriptor: `0` alone when interactive. */
  readonly streams: Record<string, WebSocket>;
  /** The command's exit code once it has ended (-1 when LXD did not say). */
  readonly exit: Promise<number>;
  signal(signal: number): void;
  resize(columns: number, rows: number): void;
  /** Ends the command (SIGKILL after `graceMs` of SIGHUP) and closes every stream. */
  close(graceMs?: number): void;
}

export const SIGHUP = 1;
export const SIGKILL = 9;
/** How long a session waits for LXD to accept its streams before it gives up. */
const CONNECT_TIMEOUT_MS = 15_000;

interface ExecMetadata {
  fds: Record<string, string>;
}

export async function startExec(client: LxdClient, instance: string, request: ExecRequest): Promise<ExecSession> {
  const started = await client.call<LxdOperation>('POST', `/1.0/instances/${instance}/exec`, {
    command: request.command,
    environment: request.environment,
    interactive: request.interactive,
    'wait-for-websocket': true,
    'record-output': false,
    ...(request.width ? { width: request.width, height: request.height } : {}),
    ...(request.cwd ? { cwd: request.cwd } : {}),
  });
  const operation = started.operation?.split('?')[0];
  const fds = (started.metadata.metadata as ExecMetadata | null)?.fds;
  if (!operation || !fds?.control) throw new LxdError(500, 'exec answered no streams');
  const open = (secret: string) => client.websocket(`${operation}/websocket`, { secret });
  const sockets = Object.fromEntries(Object.entries(fds).map(([fd, secret]) => [fd, open(secret)]));
  const { control, ...streams } = sockets as Record<string, WebSocket> & { control: WebSocket };
  // Every stream must be open before LXD starts the command; a refused one ends the whole session.
  try {
    await Promise.all(Object.values(sockets).map((ws) => opened(ws)));
  } catch (err) {
    for (const ws of Object.values(sockets)) ws.terminate();
    throw err;
  }
  for (const ws of Object.values(sockets)) {
    ws.on('error', () => ws.terminate());
    // An empty text frame is LXD's end of a stream: it completes the operation once we close ours.
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary && data.length === 0) ws.close();
    });
  }

  const exit = waitForExit(client, operation);
  const send = (message: object) => {
    if (control.readyState === control.OPEN) control.send(JSON.stringify(message));
  };
  const session: ExecSession = {
    streams,
    exit,
    signal: (signal) => send({ command: 'signal', signal }),
    resize: (columns, rows) =>
      send({ command: 'window-resize', args: { width: String(columns), height: String(rows) } }),
    close(graceMs = 0) {
      let done = false;
      const closeAll = () => {
        for (const ws of Object.values(sockets)) if (ws.readyState !== ws.CLOSED) ws.close();
      };
      void exit.finally(() => {
        done = true;
        closeAll();
      });
      session.signal(SIGHUP);
      setTimeout(() => {
        if (done) return;
        session.signal(SIGKILL);
        // LXD ends the operation once the command is gone; streams still open then are ours to close.
        setTimeout(closeAll, 1_000).unref();
      }, graceMs).unref();
    },
  };
  return session;
}

function opened(ws: WebSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new LxdError(504, 'exec stream did not open')), CONNECT_TIMEOUT_MS);
    ws.once('open', () => {
      clearTimeout(timer);
      ws.removeAllListeners('error');
      resolve();
    });
    ws.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** The exit code of the operation's command, waited for as long as it runs (a console stays for hours). */
async function waitForExit(client: LxdClient, operation: string): Promise<number> {
  for (;;) {
    try {
      const op = await client.wait(operation);
      return typeof op.metadata?.return === 'number' ? op.metadata.return : -1;
    } catch (err) {
      if (err instanceof LxdError && err.status === 504) continue;
      return -1;
    }
  }
}
