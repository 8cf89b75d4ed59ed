// Plain HTTP and HTTPS requests to the ingress on loopback, naming the host the way a client that
// resolved it would (the Host header; SNI over TLS), with a fresh connection each.
import http from 'node:http';
import net from 'node:net';
import https from 'node:https';
import { checkServerIdentity, type PeerCertificate, type TLSSocket } from 'node:tls';

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  certificate?: PeerCertificate;
}

function collect(res: http.IncomingMessage, certificate?: PeerCertificate): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () =>
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        body: Buffer.concat(chunks).toString(),
        certificate,
      }),
    );
    res.on('error', reject);
  });
}

export function get(
  port: number,
  host: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, headers: { ...headers, host }, agent: false },
      (res) => void collect(res).then(resolve, reject),
    );
    req.on('error', reject);
    req.end();
  });
}

export function httpsGet(
  port: number,
  options: { servername: string | undefined; host: string; ca: string; path?: string },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: options.path ?? '/',
        // servername '' sends no SNI at all; the name checked is still the Host's.
        servername: options.servername ?? '',
        checkServerIdentity: (_h, cert) => checkServerIdentity(options.servername ?? options.host, cert),
        headers: { host: options.host },
        ca: options.ca,
        agent: false,
      },
      (res) => void collect(res, (res.socket as TLSSocket).getPeerCertificate()).then(resolve, reject),
    );
    req.on('error', reject);
    req.end();
  });
}

/** Resolves once a TCP connection to address:port is accepted (a unit's program is up). */
export async function listening(address: string, port: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, address, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${address}:${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
