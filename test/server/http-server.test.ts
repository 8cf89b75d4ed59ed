// createHttpServer(): requests and responses are born with the app's prototypes (so Express's
// setPrototypeOf changes nothing) and behave as Node's own in every other way.
import { once } from 'node:events';
import { IncomingMessage, ServerResponse } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../../server/src/http/server.js';

const app = express();
app.use(express.json());
app.post('/echo/:id', (req, res) => {
  res.set('X-Seen', String(req.get('x-test'))).status(201).json({ id: req.params.id, query: req.query, body: req.body });
});
// V8's own view of an object's shape (natives syntax, allowed here at run time for these two checks).
setFlagsFromString('--allow-natives-syntax');
const hasFastProperties = new Function('o', 'return %HasFastProperties(o)') as (o: object) => boolean;
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
const SYMBOL_KEYED = Symbol('symbol-keyed');
const shapes: { req: object; res: object; fast: boolean }[] = [];
app.get('/shape', (req, res) => {
  // What the stack does to every request: properties added by name and under a symbol key.
  (res as unknown as Record<symbol, number>)[SYMBOL_KEYED] = 1;
  (req as unknown as Record<string, unknown>).openapi = { route: '/shape' };
  shapes.push({ req, res, fast: hasFastProperties(req) && hasFastProperties(res) });
  res.json({});
});
app.get('/stream', (_req, res) => {
  res.write('a');
  setTimeout(() => res.end('b'), 5);
});

const server = createHttpServer(app);
// Seen before Express handles the request (a listener prepended to the app's).
const arrivals: { request: boolean; response: boolean; nodeTypes: boolean }[] = [];
server.prependListener('request', (req, res) => {
  arrivals.push({
    request: Object.getPrototypeOf(req) === app.request,
    response: Object.getPrototypeOf(res) === app.response,
    nodeTypes: req instanceof IncomingMessage && res instanceof ServerResponse,
  });
});
let base = '';

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe('createHttpServer', () => {
  it("creates requests and responses with the app's prototypes", async () => {
    arrivals.length = 0;
    const res = await fetch(`${base}/stream`);
    expect(await res.text()).toBe('ab');
    expect(arrivals).toEqual([{ request: true, response: true, nodeTypes: true }]);
  });

  it('keeps requests and responses fast objects that share their hidden class', async () => {
    shapes.length = 0;
    for (let i = 0; i < 3; i += 1) expect((await fetch(`${base}/shape`)).status).toBe(200);
    expect(shapes.map((s) => s.fast)).toEqual([true, true, true]);
    expect(haveSameMap(shapes[1]!.req, shapes[2]!.req)).toBe(true);
    expect(haveSameMap(shapes[1]!.res, shapes[2]!.res)).toBe(true);
  });

  it('serves requests as Express on a plain server does: params, query, headers, body, status', async () => {
    const res = await fetch(`${base}/echo/7?a=1&b=two`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-test': 'yes' },
      body: JSON.stringify({ n: 1 }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('x-seen')).toBe('yes');
    expect(await res.json()).toEqual({ id: '7', query: { a: '1', b: 'two' }, body: { n: 1 } });
  });

  it('keeps connections alive across requests', async () => {
    // At most one new connection for three requests (none if the client reuses an earlier one).
    const ports = new Set<number>();
    const onConnection = (socket: { remotePort?: number }) => ports.add(socket.remotePort!);
    server.on('connection', onConnection);
    for (let i = 0; i < 3; i += 1) expect((await fetch(`${base}/stream`)).status).toBe(200);
    server.off('connection', onConnection);
    expect(ports.size).toBeLessThanOrEqual(1);
  });
});
