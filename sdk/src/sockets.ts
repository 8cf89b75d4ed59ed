// Opening the edge gateway's sockets from Node (DECISIONS.md §6 "The edge gateway"), on `ws`: a ticket's
// `url` is redeemed by the upgrade itself, so a refused upgrade (401 spent or expired, 403 origin, 429
// too many sockets, 503 nothing running) rejects with its HTTP status and nothing is retried: a ticket
// is single use, ask for a new one.
import WebSocket from 'ws';

export interface SocketOptions {
  /** Sent as the `Origin` header (a browser-like caller); absent by default. */
  origin?: string;
  signal?: AbortSignal;
}

/** The gateway refused the upgrade; `status` is its HTTP answer. */
export class SvcSocketRefused extends Error {
  override readonly name = 'SvcSocketRefused';
  constructor(readonly status: number) {
    super(`the gateway refused the socket with HTTP ${status}`);
  }
}

/**
 * Resolves with the open socket (binary frames as Buffers). The gateway sends at once (a console's
 * scrollback), so frames are held until the caller's code after `await` has run: attach the `message`
 * listener right after the await, in the same turn.
 */
export function openSocket(
  url: string,
  protocols: string[] = [],
  options: SocketOptions = {},
): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols, {
      ...(options.origin ? { origin: options.origin } : {}),
      perMessageDeflate: false,
    });
    const abort = () => {
      ws.terminate();
      reject(options.signal?.reason ?? new Error('aborted'));
    };
    options.signal?.addEventListener('abort', abort, { once: true });
    ws.once('unexpected-response', (_req, res) => {
      options.signal?.removeEventListener('abort', abort);
      res.resume();
      ws.terminate();
      reject(new SvcSocketRefused(res.statusCode ?? 0));
    });
    ws.once('error', (err) => {
      options.signal?.removeEventListener('abort', abort);
      reject(err);
    });
    ws.once('open', () => {
      options.signal?.removeEventListener('abort', abort);
      ws.removeAllListeners('error');
      ws.pause();
      resolve(ws);
      setImmediate(() => ws.resume());
    });
  });
}

/** The command console of a console ticket's `url`: binary frames both ways, the scrollback first. */
export function openConsoleSocket(url: string, options?: SocketOptions): Promise<WebSocket> {
  return openSocket(url, [], options);
}

type Call = (
  operationId: string,
  params?: { path?: Record<string, string>; query?: Record<string, unknown> },
) => Promise<unknown>;

/** `client.openConsole`: a console ticket, then its socket. */
export async function openConsoleWith(
  call: Call,
  instanceId: string,
  resourceId: string,
  options?: SocketOptions,
): Promise<WebSocket> {
  const ticket = (await call('consoleTicketCreate', {
    path: { id: instanceId, resource_id: resourceId },
  })) as {
    url: string;
  };
  return openConsoleSocket(ticket.url, options);
}

/** The subprotocol of the gateway's shells: binary frames the terminal, text frames JSON control messages. */
export const PTY_SUBPROTOCOL = 'svc-pty-v1';

export interface ShellOptions extends SocketOptions {
  /** The terminal's size: columns 1-500 (default 80), rows 1-200 (default 24). */
  columns?: number;
  rows?: number;
  /** The container (`?container=`); default the workload's. */
  container?: string;
}

/** A text frame of the shell: `exit` when the shell exited, `session_end` before the gateway closes. */
export type ShellControl = { type: 'exit'; code: number } | { type: 'session_end'; reason: string };

/**
 * The shell of a shell ticket's `url`, of `columns` x `rows`: binary frames carry the terminal's bytes
 * both ways; resize with `resizeShell`; text frames from the gateway are ShellControl JSON.
 */
export function openShellSocket(url: string, options: ShellOptions = {}): Promise<WebSocket> {
  const target = new URL(url);
  target.searchParams.set('columns', String(options.columns ?? 80));
  target.searchParams.set('rows', String(options.rows ?? 24));
  return openSocket(target.toString(), [PTY_SUBPROTOCOL], options);
}

/** Sends the resize control frame (a size out of range ends the session). */
export function resizeShell(ws: WebSocket, columns: number, rows: number): void {
  ws.send(JSON.stringify({ type: 'resize', columns, rows }));
}

/** `client.openShell`: a shell ticket, then its socket. */
export async function openShellWith(
  call: Call,
  instanceId: string,
  resourceId: string,
  options: ShellOptions = {},
): Promise<WebSocket> {
  const ticket = (await call('shellTicketCreate', {
    path: { id: instanceId, resource_id: resourceId },
    ...(options.container ? { query: { container: options.container } } : {}),
  })) as { url: string };
  return openShellSocket(ticket.url, options);
}

/**
 * The screen of a screen ticket: RFB 3.8 in binary frames both ways (the server speaks first), opened
 * with the ticket's `protocols` (`["binary"]`). Only the hold's sockets type and point; keep the hold
 * with `screenHoldRefresh` every few seconds (it lasts 60 s).
 */
export function openScreenSocket(
  ticket: { url: string; protocols: string[] },
  options?: SocketOptions,
): Promise<WebSocket> {
  return openSocket(ticket.url, ticket.protocols, options);
}
