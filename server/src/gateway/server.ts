// The edge gateway (SUBSTRATE.md "The edge gateway"; DECISIONS.md §6): an HTTP server whose WebSocket
// upgrades redeem tickets the API minted and bridge them to a workload's console, a shell, or a machine's
// screen (whose watchers' input is dropped: only the hold's sockets type). Bytes never pass through the
// API process. Any number of gateways share one PostgreSQL: a ticket is spent by one conditional write,
// so only one of them accepts it.
//
// An upgrade is checked in this order, each refusal an HTTP answer before the socket exists: the path
// (404), the browser's Origin (403), the ticket's signature, purpose and deadline (401), the caps on open
// sockets (429), what it opens being there (503), and then the ticket is spent (401 if someone was
// first, or the caller's access ended meanwhile).
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Config } from '../config.js';
import type { Sql } from '../db/client.js';
import type { Clock } from '../clock.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { SubstrateDriver } from '../substrate/driver.js';
import { CLOSE } from './close-codes.js';
import { bridgeConsole } from './console-bridge.js';
import { bridgeScreen } from './screen-bridge.js';
import { bridgeShell, PTY_SUBPROTOCOL, sizeOf } from './shell-bridge.js';
import { handleFileTransfer } from './file-transfers.js';
import { SWEEP_EVERY_MS, sweepUploadLeftovers } from './upload-leftovers.js';
import { refusal, sendProblem } from './problems.js';
import { ConnectionLimits } from './limits.js';
import { originChecker } from './origin.js';
import {
  heartbeat,
  redeemTicket,
  registerGateway,
  screenTicketsHolding,
  ticketsStillAllowed,
  unregisterGateway,
  type RedeemedTicket,
} from './store.js';
import { ticketKeyRing, verifyTicket, type TicketPurpose } from './tickets.js';
import { createSftpServer, type SftpServer } from './sftp/server.js';

/** How long a socket closed for a protocol error waits for the client's close frame. */
const CLOSE_GRACE_MS = 2_000;

/** A client frame larger than this closes the socket with 1009 (console input, shell keys, RFB events). */
export const MAX_MESSAGE_BYTES = 64 * 1024;
/** How often the callers of open sockets are checked (access ended: closed within 2 s). */
const ACCESS_CHECK_MS = 1_000;
const HEARTBEAT_MS = 5_000;

export interface GatewayOptions {
  sql: Sql;
  config: Config;
  log: Logger;
  clock: Clock;
  box: SecretBox;
  substrate: SubstrateDriver;
}

export interface Gateway {
  readonly id: string;
  readonly server: Server;
  /** The SFTP server (sftp/server.ts), listening once its `listen` is called (main.ts: SFTP_PORT). */
  readonly sftp: SftpServer;
  /** Open sockets now. */
  readonly connections: number;
  /** Registers the gateway in PostgreSQL and starts its timers (after listen). */
  start(url: string): Promise<void>;
  /** Closes every socket (1001), stops the timers and removes its row. */
  close(): Promise<void>;
}

interface Open {
  ticket: RedeemedTicket;
  ws: WebSocket;
  end: EndSession;
}

/** Ends a session from the gateway's side (a shell first sends its `session_end` frame). */
type EndSession = (reason: 'access_ended' | 'gateway_shutdown' | 'stopped', code: number) => void;

/**
 * A purpose's door: `check` refuses a malformed request before the ticket is spent (its HTTP status),
 * `open` opens what the redeemed ticket names (null when it is not there: 503).
 */
interface Opener {
  check?(url: URL, req: IncomingMessage): number | null;
  open(ticket: RedeemedTicket, url: URL): Promise<Session | null>;
}
interface Session {
  /** Bridges the accepted socket; answers how the gateway ends it. */
  attach(ws: WebSocket, ticket: RedeemedTicket): EndSession;
  /** The upgrade was refused after opening: let go of what was opened. */
  abort(): void;
}

export function createGateway(options: GatewayOptions): Gateway {
  const { sql, config, log, clock, substrate } = options;
  const id = randomUUID();
  const keys = ticketKeyRing(sql, clock, options.box);
  const originAllowed = originChecker(config);
  const limits = new ConnectionLimits(
    config.gatewayMaxConnectionsPerUser,
    config.gatewayMaxConnectionsPerResource,
  );
  const open = new Set<Open>();
  /** Screen sockets (by ticket) whose session holds the screen now: only they type and point. */
  const holding = new Map<string, boolean>();
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_MESSAGE_BYTES,
    perMessageDeflate: false,
  });
  let timers: NodeJS.Timeout[] = [];
  let closing = false;
  const sftp = createSftpServer({
    sql,
    config,
    log: log.child({ part: 'sftp' }),
    clock,
    box: options.box,
    substrate,
  });

  const transfers = { sql, clock, log, keys, substrate, limits, gatewayId: id, inflight: new Set<Promise<void>>() };

  const openers: Partial<Record<TicketPurpose, Opener>> = {
    console: {
      async open({ resource_id }) {
        const stream: Duplex | null = await substrate.openConsole(resource_id).catch(() => null);
        if (!stream) return null;
        return {
          attach: (ws) => {
            bridgeConsole(ws, stream);
            return (reason, code) => ws.close(code, reason.replace('_', ' '));
          },
          abort: () => stream.destroy(),
        };
      },
    },
    shell: {
      check: (url, req) => (sizeOf(url) && offersSubprotocol(req, PTY_SUBPROTOCOL) ? null : 400),
      async open({ resource_id, details }, url) {
        const shells = Array.isArray(details.shells) ? (details.shells as string[]) : [];
        const shell = await substrate.openShell(resource_id, shells, sizeOf(url)!).catch(() => null);
        if (!shell) return null;
        return {
          attach: (ws) =>
            bridgeShell(ws, shell, {
              idleSeconds: config.shellIdleSeconds,
              maxSeconds: config.shellMaxSeconds,
            }),
          abort: () => shell.stop(),
        };
      },
    },
    screen: {
      async open({ id: ticketId, resource_id }) {
        const stream: Duplex | null = await substrate.openScreen(resource_id).catch(() => null);
        if (!stream) return null;
        const holds = await screenTicketsHolding(sql, [ticketId], clock.now()).catch((err: unknown) => {
          stream.destroy();
          throw err;
        });
        holding.set(ticketId, holds.has(ticketId));
        return {
          attach: (ws) => {
            bridgeScreen(ws, stream, () => holding.get(ticketId) === true);
            ws.once('close', () => holding.delete(ticketId));
            return (reason, code) => ws.close(code, reason.replace('_', ' '));
          },
          abort: () => {
            holding.delete(ticketId);
            stream.destroy();
          },
        };
      },
    },
  };

  const server = createServer((req, res) => {
    if (req.url === '/healthz' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify({ status: 'ok', connections: open.size }));
      return;
    }
    if (!closing && handleFileTransfer(transfers, req, res)) return;
    sendProblem(res, refusal(404, 'not-found', 'No such route.'));
  });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    upgrade(req, socket, head).catch((err: unknown) => {
      log.error({ err: err instanceof Error ? err.message : String(err) }, 'gateway upgrade failed');
      refuse(socket, 500, 'Internal Server Error');
    });
  });

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const purpose = url.pathname.slice(1) as TicketPurpose;
    const opener = Object.hasOwn(openers, purpose) ? openers[purpose] : undefined;
    if (closing) return refuse(socket, 503, 'Service Unavailable');
    if (!opener) return refuse(socket, 404, 'Not Found');
    if (!originAllowed(req.headers.origin)) return refuse(socket, 403, 'Forbidden');
    const claim = await verifyTicket(keys, url.searchParams.get('ticket') ?? '', purpose, clock.now());
    if (!claim) return refuse(socket, 401, 'Unauthorized');
    const malformed = opener.check?.(url, req) ?? null;
    if (malformed !== null) return refuse(socket, malformed, 'Bad Request');
    if (!limits.take(claim.userId, claim.resourceId)) return refuse(socket, 429, 'Too Many Requests');
    let session: Session | null = null;
    let handedOver = false;
    try {
      const ticket = await redeemTicket(sql, claim, id, clock.now());
      if (!ticket) return refuse(socket, 401, 'Unauthorized');
      session = await opener.open(ticket, url);
      if (!session) return refuse(socket, 503, 'Service Unavailable');
      const ready = session;
      handedOver = true;
      let connected = false;
      // ws answers a malformed upgrade itself and never calls back: the slot is given back on close.
      socket.once('close', () => {
        if (connected) return;
        limits.give(claim.userId, claim.resourceId);
        ready.abort();
      });
      wss.handleUpgrade(req, socket, head, (ws) => {
        connected = true;
        // A protocol error (a frame over the limit) has already queued its close frame (1009): let it
        // reach the client before the socket goes, and do not wait on a client that never answers.
        ws.on('error', () => {
          if (ws.readyState !== ws.CLOSING) return ws.terminate();
          setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
        });
        const entry: Open = { ticket, ws, end: ready.attach(ws, ticket) };
        open.add(entry);
        ws.once('close', () => {
          open.delete(entry);
          limits.give(claim.userId, claim.resourceId);
        });
      });
    } finally {
      if (!handedOver) {
        limits.give(claim.userId, claim.resourceId);
        session?.abort();
      }
    }
  }

  async function checkAccess(): Promise<void> {
    if (open.size === 0) return;
    const entries = [...open];
    const allowed = await ticketsStillAllowed(
      sql,
      [...new Set(entries.map((e) => e.ticket.id))],
      clock.now(),
    );
    const screens = entries.filter((e) => e.ticket.purpose === 'screen').map((e) => e.ticket.id);
    if (screens.length > 0) {
      // A takeover, a lapse or a release turns the socket read-only (and a refresh back) within a tick.
      const holds = await screenTicketsHolding(sql, screens, clock.now());
      for (const ticketId of screens) if (holding.has(ticketId)) holding.set(ticketId, holds.has(ticketId));
    }
    for (const entry of entries) {
      const running = allowed.get(entry.ticket.id);
      if (running === undefined) entry.end('access_ended', CLOSE.accessEnded);
      else if (!running && entry.ticket.purpose === 'shell') entry.end('stopped', CLOSE.ended);
    }
  }

  return {
    id,
    server,
    sftp,
    get connections() {
      return open.size;
    },
    async start(url) {
      await registerGateway(sql, { id, url, pid: process.pid, now: clock.now() });
      const every = (ms: number, work: () => Promise<void>, what: string) => {
        let running = false;
        const timer = setInterval(() => {
          if (running) return;
          running = true;
          work()
            .catch((err: unknown) =>
              log.warn({ err: err instanceof Error ? err.message : String(err) }, what),
            )
            .finally(() => (running = false));
        }, ms);
        timer.unref();
        timers.push(timer);
      };
      every(ACCESS_CHECK_MS, checkAccess, 'could not check the access of open sockets');
      const sweep = () => sweepUploadLeftovers(sql, substrate, log).then(() => undefined);
      void sweep().catch((err: unknown) =>
        log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not sweep upload leftovers'),
      );
      every(SWEEP_EVERY_MS, sweep, 'could not sweep upload leftovers');
      every(
        HEARTBEAT_MS,
        () => heartbeat(sql, id, url, clock.now()),
        'could not write the gateway heartbeat',
      );
    },
    async close() {
      closing = true;
      for (const timer of timers) clearInterval(timer);
      timers = [];
      for (const { end } of open) end('gateway_shutdown', CLOSE.goingAway);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Uploads are cut now, and each removes its temporary file before the process may exit.
      server.closeAllConnections();
      await Promise.allSettled([...transfers.inflight]);
      await closed;
      for (const { ws } of open) ws.terminate();
      await sftp.close();
      await unregisterGateway(sql, id).catch(() => undefined);
    },
  };
}

function offersSubprotocol(req: IncomingMessage, protocol: string): boolean {
  const header = req.headers['sec-websocket-protocol'];
  return (header ?? '').split(',').some((p) => p.trim() === protocol);
}

function refuse(socket: Duplex, status: number, text: string): void {
  if (socket.destroyed) return;
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}
