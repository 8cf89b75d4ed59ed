// The edge's control listener: GET /state answers what it forwards now, for the API's live route. It
// tells allocation ids and states only, never addresses of units or rules.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EdgeReport } from './report.js';

export interface Control {
  url: string;
  close(): Promise<void>;
}

export async function startControl(host: string, port: number, report: () => EdgeReport): Promise<Control> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/state') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(report()));
  });
  server.keepAliveTimeout = 1_000;
  server.listen(port, host);
  await once(server, 'listening');
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
