// A real Chromium for end-to-end tests, driven by playwright-core over CDP. Nothing is downloaded: the
// browser is the system's (Debian's `chromium` package; .ci/run installs it) or CHROMIUM_PATH.
import { existsSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const CANDIDATES = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/snap/bin/chromium',
];

/** The Chromium binary to drive, or null when this machine has none. */
export function findChromium(): string | null {
  const fromEnv = process.env.CHROMIUM_PATH?.trim();
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : null;
  return CANDIDATES.find((p) => existsSync(p)) ?? null;
}

export interface PageServer {
  port: number;
  /** Where `/api/...` requests are passed on to (set once the app listens). */
  upstream: string;
  close(): Promise<void>;
}

/**
 * A loopback HTTP server that serves `html` at `/` and passes `/api/...` on to `upstream`, so the page
 * and the API share one origin (no CORS in the picture) whatever port the app got.
 */
export async function startPageServer(html: string): Promise<PageServer> {
  const state: PageServer = { port: 0, upstream: '', close: () => Promise.resolve() };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      res.statusCode = 502;
      res.end(String(err));
    });
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.url === '/' || req.url === '/index.html') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(html);
      return;
    }
    if (!req.url?.startsWith('/api/')) {
      res.statusCode = 404;
      res.end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers: Record<string, string> = {};
    for (const name of ['authorization', 'content-type', 'accept']) {
      const v = req.headers[name];
      if (typeof v === 'string') headers[name] = v;
    }
    const upstream = await fetch(`${state.upstream}${req.url}`, {
      method: req.method,
      headers,
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    });
    res.statusCode = upstream.status;
    const type = upstream.headers.get('content-type');
    if (type) res.setHeader('content-type', type);
    res.end(Buffer.from(await upstream.arrayBuffer()));
  }
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  state.port = (server.address() as AddressInfo).port;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
