// The reverse proxy of the ingress, on node:http: bodies stream both ways through pipes (never
// buffered), an Upgrade (WebSocket) becomes a spliced pair of sockets, hop-by-hop headers are dropped
// and X-Forwarded-* set. node:http rather than a proxy library: the few rules below are the whole of
// it, and the well-known library (http-proxy) is unmaintained and patches around Node's internals.
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { IngressTarget } from './state.js';

/** A unit that does not accept the connection within this is answered 502. */
const CONNECT_TIMEOUT_MS = 10_000;
/** Silence this long on an exchange (no bytes either way, no answer yet) ends it: 504 before an answer. */
export const IDLE_TIMEOUT_MS = 60_000;

// RFC 9110 §7.6.1, and the proxy headers of old that mean the same.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

const agent = new http.Agent({ keepAlive: true, maxSockets: 512, timeout: IDLE_TIMEOUT_MS });

function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const listed = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
  );
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || listed.has(name)) continue;
    out[name] = value;
  }
  return out;
}

export interface Forwarded {
  /** The client's address, as the ingress's socket sees it. */
  clientAddress: string;
  proto: 'http' | 'https';
  /** The Host the client asked for (with its port, as sent). */
  host: string;
}

/**
 * The request's headers for the unit. X-Forwarded-For is the client's address alone, not appended to:
 * the ingress is the first hop the unit can trust, and a client's own claim would pass as the edge's.
 */
function upstreamHeaders(req: http.IncomingMessage, fwd: Forwarded): http.OutgoingHttpHeaders {
  const headers = endToEnd(req.headers);
  headers['x-forwarded-for'] = fwd.clientAddress;
  headers['x-forwarded-proto'] = fwd.proto;
  headers['x-forwarded-host'] = fwd.host;
  return headers;
}

function plain(res: http.ServerResponse, status: number, text: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
  res.end(`${text}\n`);
}

function connectTimer(request: http.ClientRequest, onTimeout: () => void): void {
  request.once('socket', (socket) => {
    if (!socket.connecting) return;
    const timer = setTimeout(onTimeout, CONNECT_TIMEOUT_MS);
    socket.once('connect', () => clearTimeout(timer));
    socket.once('close', () => clearTimeout(timer));
  });
}

export function proxyRequest(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  target: IngressTarget,
  fwd: Forwarded,
): void {
  const upstream = http.request({
    host: target.address,
    port: target.port,
    method: req.method,
    path: req.url,
    headers: upstreamHeaders(req, fwd),
    agent,
  });
  let answered = false;
  const fail = (status: number, text: string) => {
    upstream.destroy();
    if (!answered) {
      answered = true;
      plain(res, status, text);
    } else res.destroy();
  };
  connectTimer(upstream, () => fail(502, 'Bad gateway: the service did not answer.'));
  upstream.setTimeout(IDLE_TIMEOUT_MS, () =>
    fail(504, 'Gateway timeout: the service did not answer in time.'),
  );
  upstream.once('error', () => fail(502, 'Bad gateway: the service did not answer.'));
  upstream.once('response', (answer) => {
    answered = true;
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.headers));
    answer.pipe(res);
    answer.once('error', () => res.destroy());
    answer.once('aborted', () => res.destroy());
  });
  // The client going away ends the exchange with the unit too.
  res.once('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.once('error', () => upstream.destroy());
  req.pipe(upstream);
}

function writeHead(
  socket: Duplex,
  status: number,
  message: string,
  headers: http.IncomingHttpHeaders | http.OutgoingHttpHeaders,
): void {
  let head = `HTTP/1.1 ${status} ${message}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) head += `${name}: ${String(v)}\r\n`;
  }
  socket.write(`${head}\r\n`);
}

/** A request asking to Upgrade (a WebSocket): once the unit agrees (101), the two sockets are spliced. */
export function proxyUpgrade(
  req: http.IncomingMessage,
  socket: Duplex,
  head: Buffer,
  target: IngressTarget,
  fwd: Forwarded,
): void {
  const headers = upstreamHeaders(req, fwd);
  headers.connection = 'Upgrade';
  headers.upgrade = req.headers.upgrade ?? '';
  const upstream = http.request({
    host: target.address,
    port: target.port,
    method: req.method,
    path: req.url,
    headers,
    // Its own connection: an upgraded socket never returns to a pool.
    agent: false,
  });
  let settled = false;
  const fail = (status: number, text: string) => {
    upstream.destroy();
    if (settled) return;
    settled = true;
    const body = `${text}\n`;
    writeHead(socket, status, status === 502 ? 'Bad Gateway' : 'Gateway Timeout', {
      'content-type': 'text/plain; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    });
    socket.end(body);
  };
  connectTimer(upstream, () => fail(502, 'Bad gateway: the service did not answer.'));
  upstream.setTimeout(IDLE_TIMEOUT_MS, () =>
    fail(504, 'Gateway timeout: the service did not answer in time.'),
  );
  upstream.once('error', () => fail(502, 'Bad gateway: the service did not answer.'));
  socket.once('error', () => upstream.destroy());
  upstream.once('upgrade', (answer, unitSocket, unitHead) => {
    settled = true;
    upstream.setTimeout(0);
    unitSocket.setTimeout(0);
    // The answer's Connection and Upgrade are what the client needs to see the switch.
    const answerHeaders = {
      ...endToEnd(answer.headers),
      connection: 'Upgrade',
      upgrade: answer.headers.upgrade ?? '',
    };
    writeHead(socket, answer.statusCode ?? 101, answer.statusMessage ?? 'Switching Protocols', answerHeaders);
    if (unitHead.length > 0) socket.write(unitHead);
    if (head.length > 0) unitSocket.write(head);
    unitSocket.pipe(socket);
    socket.pipe(unitSocket);
    unitSocket.once('error', () => socket.destroy());
    socket.once('error', () => unitSocket.destroy());
    unitSocket.once('close', () => socket.destroy());
    socket.once('close', () => unitSocket.destroy());
  });
  // The unit declined the upgrade: its answer goes back as it is, and the connection closes after it.
  upstream.once('response', (answer) => {
    settled = true;
    writeHead(socket, answer.statusCode ?? 502, answer.statusMessage ?? '', {
      ...endToEnd(answer.headers),
      connection: 'close',
      ...(answer.headers['content-length'] === undefined
        ? {}
        : { 'content-length': answer.headers['content-length'] }),
    });
    answer.pipe(socket);
  });
  upstream.end();
}
