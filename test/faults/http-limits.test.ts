// What the HTTP layer does with clients that give up or crawl: a request abandoned by its client is
// logged when its connection closes (and again when its handler ends, with what it answered); an
// aborted upload is a warning, not an internal error; the server's timeouts fit an API.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { connect as tcpConnect, type Socket } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handlers } from '../../server/src/handlers.js';
import type { Handlers } from '../../server/src/http/handler.js';
import { createHttpServer, maxConnectionsFor, SERVER_LIMITS } from '../../server/src/http/server.js';
import { startTestApp, type TestApp } from '../support/app.js';

let app: TestApp;
let release: () => void = () => {};
let entered: () => void = () => {};
let handlerEntered = new Promise<void>((r) => (entered = r));

const gated: Handlers = {
  ...handlers,
  // Held until the test lets it go, so its client can give up first.
  async publicCapabilitiesGet(args) {
    entered();
    await new Promise<void>((r) => (release = r));
    return handlers.publicCapabilitiesGet(args);
  },
};

beforeAll(async () => {
  app = await startTestApp({ handlers: gated });
});
afterAll(() => app.close());

async function logged(msg: string, predicate: (l: Record<string, unknown>) => boolean = () => true) {
  for (let i = 0; i < 200; i += 1) {
    const line = app.logs.find((l) => l.msg === msg && predicate(l));
    if (line) return line;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no "${msg}" line; got ${JSON.stringify(app.logs.slice(-5))}`);
}

describe('a request its client abandoned', () => {
  it('is logged as a warning when the connection closes, then with the answer its handler gave', async () => {
    handlerEntered = new Promise<void>((r) => (entered = r));
    const controller = new AbortController();
    const pending = fetch(`${app.baseUrl}/api/v2/public/capabilities`, {
      headers: { 'x-request-id': 'abandoned-1' },
      signal: controller.signal,
    }).catch((e: unknown) => e);
    await handlerEntered;
    controller.abort();
    await pending;
    const first = await logged('request abandoned by the client', (l) => l.request_id === 'abandoned-1');
    expect(first).toMatchObject({
      level: 40,
      method: 'GET',
      route: '/public/capabilities',
      body_complete: true,
    });
    release();
    const done = await logged('abandoned request finished', (l) => l.request_id === 'abandoned-1');
    expect(done).toMatchObject({ level: 40, status: 200 });
  });

  it('an upload the client cut short is a warning, never an internal error', async () => {
    const errorsBefore = app.logs.filter((l) => (l.level as number) >= 50).length;
    await new Promise<void>((resolve, reject) => {
      const { port } = new URL(app.baseUrl);
      const socket = tcpConnect(Number(port), '127.0.0.1', () => {
        socket.write(
          'POST /api/v2/public/client-errors HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: cut-upload\r\n' +
            'Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"message": "par',
        );
        setImmediate(() => {
          socket.destroy();
          resolve();
        });
      });
      socket.on('error', reject);
    });
    const line = await logged('request abandoned by the client', (l) => l.request_id === 'cut-upload');
    expect(line).toMatchObject({ level: 40, method: 'POST', body_complete: false });
    // Nothing at error level for it.
    await new Promise((r) => setTimeout(r, 100));
    expect(app.logs.filter((l) => (l.level as number) >= 50).length).toBe(errorsBefore);
  });
});

describe('server limits', () => {
  it('headers within 15 s, a request within 60 s, checked every 2 s; connections under the descriptor limit', () => {
    const server = createHttpServer(express());
    expect(server.headersTimeout).toBe(SERVER_LIMITS.headersTimeout);
    expect(server.requestTimeout).toBe(SERVER_LIMITS.requestTimeout);
    expect(SERVER_LIMITS).toMatchObject({ headersTimeout: 15_000, requestTimeout: 60_000 });
    expect(server.keepAliveTimeout).toBe(5_000);
    expect(server.maxConnections).toBeGreaterThan(0);
    expect(maxConnectionsFor(1024)).toBe(563);
    expect(maxConnectionsFor(20_000)).toBe(15_744);
    expect(maxConnectionsFor(100)).toBe(64);
    expect(maxConnectionsFor(null)).toBe(4096);
  });
});

/** A client that sends `head` and then one more byte of `drip` every 100 ms, forever; resolves when the server closes it. */
function crawler(port: number, head: string, drip: string): { socket: Socket; closed: Promise<string> } {
  const socket = tcpConnect(port, '127.0.0.1');
  let answer = '';
  let i = 0;
  const timer = setInterval(() => socket.write(drip[i++ % drip.length]!), 100);
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (answer += d));
  socket.on('error', () => {});
  socket.write(head);
  const closed = new Promise<string>((resolve) =>
    socket.on('close', () => {
      clearInterval(timer);
      resolve(answer);
    }),
  );
  return { socket, closed };
}

describe('slow clients (slowloris) against the server factory main.ts uses, with deadlines of a second', () => {
  it('cuts 100 connections dripping headers and 20 dripping a body at their deadlines, serving others meanwhile', async () => {
    const api = express();
    api.get('/ping', (_req, res) => {
      res.json({ ok: true });
    });
    api.post('/upload', (req, res) => {
      req.resume();
      req.on('end', () => res.json({ ok: true }));
    });
    const server = createHttpServer(api, {
      headersTimeout: 1_000,
      requestTimeout: 2_000,
      connectionsCheckingInterval: 200,
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      const started = Date.now();
      const headerCrawlers = Array.from({ length: 100 }, () =>
        crawler(port, 'GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\n', 'X-Slow: aaaaaaaa\r\n'),
      );
      const bodyCrawlers = Array.from({ length: 20 }, () =>
        crawler(
          port,
          'POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n',
          'x',
        ),
      );
      // While they crawl, a normal client is served.
      const ping = await fetch(`http://127.0.0.1:${port}/ping`);
      expect(ping.status).toBe(200);
      const headerAnswers = await Promise.all(headerCrawlers.map((c) => c.closed));
      const headersCut = Date.now() - started;
      const bodyAnswers = await Promise.all(bodyCrawlers.map((c) => c.closed));
      const bodiesCut = Date.now() - started;
      // Cut by the server (408), not by the clients, which would drip forever.
      for (const a of [...headerAnswers, ...bodyAnswers]) expect(a).toMatch(/^HTTP\/1\.1 408 /);
      // At the deadline plus a check interval or so; generous bounds for a loaded machine, far below
      // the forever the crawlers would otherwise take.
      expect(headersCut).toBeLessThan(10_000);
      expect(bodiesCut).toBeGreaterThanOrEqual(1_900);
      expect(bodiesCut).toBeLessThan(15_000);
      const after = await fetch(`http://127.0.0.1:${port}/ping`);
      expect(after.status).toBe(200);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }, 30_000);
});
