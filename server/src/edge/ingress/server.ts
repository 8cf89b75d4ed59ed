// The edge's HTTP ingress (DECISIONS.md §6 "DNS and domains"; SUBSTRATE.md "The edge"): HTTP on
// HOST:INGRESS_HTTP_PORT and HTTPS on HOST:INGRESS_HTTPS_PORT, routing by Host (and over HTTPS by SNI,
// whose name the Host must match) to the unit serving that name. Unknown names: HTTP answers 404;
// HTTPS refuses the handshake (no certificate is presented for a name the platform holds none for,
// so a client never sees another name's certificate). HTTP also answers ACME HTTP-01 challenges at
// /.well-known/acme-challenge/{token} for any name, from `acme_challenges`.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type tls from 'node:tls';
import type { CertificateContexts } from './certificates.js';
import { proxyRequest, proxyUpgrade, type Forwarded } from './proxy.js';
import type { IngressTarget } from './state.js';

const CHALLENGE_PREFIX = '/.well-known/acme-challenge/';

export interface IngressOptions {
  host: string;
  /** null: that listener is off; 0: any free port. */
  httpPort: number | null;
  httpsPort: number | null;
  certificates: CertificateContexts;
  challenge(token: string): Promise<string | null>;
  warn(fields: object, message: string): void;
}

export interface Ingress {
  /** The ports really bound (null: off). */
  readonly httpPort: number | null;
  readonly httpsPort: number | null;
  /** Tries again to bind a listener whose port was taken at start. */
  bindMissing(): Promise<void>;
  setRoutes(routes: Map<string, IngressTarget>): void;
  close(): Promise<void>;
}

/** The name of a Host header: lowercase, without its port or a trailing dot; null when absent. */
export function hostOf(header: string | undefined): string | null {
  if (!header) return null;
  let name = header.trim().toLowerCase();
  if (name.startsWith('[')) name = name.slice(0, name.indexOf(']') + 1);
  else if (name.includes(':')) name = name.slice(0, name.lastIndexOf(':'));
  if (name.endsWith('.')) name = name.slice(0, -1);
  return name === '' ? null : name;
}

function plain(res: http.ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
  res.end(`${text}\n`);
}

function refuseUpgrade(socket: Duplex, status: number, text: string): void {
  const body = `${text}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: text/plain; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

function listen(server: http.Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

export async function startIngress(options: IngressOptions): Promise<Ingress> {
  let routes = new Map<string, IngressTarget>();
  const sockets = new Set<Duplex>();

  // Over HTTPS the Host must name what the handshake was for: a certificate for one name does not open
  // another name's service (RFC 9110 §7.4: 421 Misdirected Request).
  const resolve = (
    req: http.IncomingMessage,
    proto: 'http' | 'https',
  ): { target: IngressTarget; fwd: Forwarded } | { status: number; text: string } => {
    const name = hostOf(req.headers.host);
    if (!name) return { status: 400, text: 'Bad request: the Host header is missing.' };
    if (proto === 'https') {
      const sni = (req.socket as tls.TLSSocket).servername;
      if (typeof sni !== 'string' || sni.toLowerCase().replace(/\.$/, '') !== name)
        return {
          status: 421,
          text: 'Misdirected request: the Host is not the name this connection was made for.',
        };
    }
    const target = routes.get(name);
    if (!target) return { status: 404, text: 'Not found: no service is served at this name.' };
    return {
      target,
      fwd: {
        clientAddress: (req.socket.remoteAddress ?? '').replace(/^::ffff:/, ''),
        proto,
        host: req.headers.host!,
      },
    };
  };

  const handler = (proto: 'http' | 'https') => (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (proto === 'http' && req.method === 'GET' && req.url?.startsWith(CHALLENGE_PREFIX)) {
      const token = req.url.slice(CHALLENGE_PREFIX.length);
      void options
        .challenge(token)
        .then((answer) => {
          if (answer !== null) {
            res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' });
            res.end(answer);
          } else route();
        })
        .catch((err: unknown) => {
          options.warn({ err: (err as Error).message }, 'ingress cannot read the ACME challenges');
          plain(res, 503, 'Service unavailable: try again shortly.');
        });
      return;
    }
    route();
    function route() {
      const found = resolve(req, proto);
      if ('status' in found) {
        req.resume();
        plain(res, found.status, found.text);
      } else proxyRequest(req, res, found.target, found.fwd);
    }
  };

  const upgrade = (proto: 'http' | 'https') => (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.once('error', () => socket.destroy());
    const found = resolve(req, proto);
    if ('status' in found) refuseUpgrade(socket, found.status, found.text);
    else proxyUpgrade(req, socket, head, found.target, found.fwd);
  };

  const track = (server: http.Server) => {
    // Streams may run long: no whole-request deadline; the proxy ends an idle exchange instead.
    server.requestTimeout = 0;
    server.headersTimeout = 30_000;
    server.keepAliveTimeout = 5_000;
    server.on('connection', (socket: Duplex) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    server.on('clientError', (_err, socket: Duplex) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
      else socket.destroy();
    });
    return server;
  };

  const httpServer = options.httpPort === null ? null : track(http.createServer(handler('http')));
  httpServer?.on('upgrade', upgrade('http'));
  const httpsServer =
    options.httpsPort === null
      ? null
      : track(
          https.createServer({
            SNICallback: (servername, done) => {
              const context = options.certificates.lookup(servername);
              if (context) done(null, context);
              else done(new Error('no certificate for this name'));
            },
          }),
        );
  httpsServer?.on('request', handler('https'));
  httpsServer?.on('upgrade', upgrade('https'));
  // A handshake refused (an unknown name, no SNI) is the client's affair, not a fault of the edge.
  httpsServer?.on('tlsClientError', () => {});

  let httpPort: number | null = null;
  let httpsPort: number | null = null;
  // A port another program holds is not fatal: the edge still forwards allocations, reports the listener
  // off (null), and tries again on its next reconcile, as it does for allocations' ports.
  const bind = async (server: http.Server, port: number, which: string): Promise<number | null> => {
    try {
      return await listen(server, options.host, port);
    } catch (err) {
      options.warn(
        { port, listener: which, code: (err as NodeJS.ErrnoException).code },
        'ingress cannot listen',
      );
      return null;
    }
  };
  const bindMissing = async () => {
    if (httpServer && httpPort === null) httpPort = await bind(httpServer, options.httpPort!, 'http');
    if (httpsServer && httpsPort === null) httpsPort = await bind(httpsServer, options.httpsPort!, 'https');
  };
  await bindMissing();

  return {
    get httpPort() {
      return httpPort;
    },
    get httpsPort() {
      return httpsPort;
    },
    bindMissing,
    setRoutes(next) {
      routes = next;
    },
    async close() {
      await Promise.all(
        [httpServer, httpsServer].map(
          (server) =>
            new Promise<void>((done) => {
              if (!server?.listening) return done();
              server.close(() => done());
              for (const socket of sockets) socket.destroy();
            }),
        ),
      );
    },
  };
}
