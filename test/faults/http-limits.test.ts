// What the HTTP layer does with clients that give up or crawl: a request abandoned by its client is
// logged when its connection closes (and again when its handler ends, with what it answered); an
// aborted upload is a warning, not an internal error; the server's timeouts fit an API.
import { connect as tcpConnect } from 'node:net';
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
    expect(first).toMatchObject({ level: 40, method: 'GET', route: '/public/capabilities', body_complete: true });
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
