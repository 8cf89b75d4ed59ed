// A tiny HTTP server on 127.0.0.1 that answers from a script, for what the real app never does on
// demand: 503, 429 with Retry-After, hanging, dropping the connection.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** Answers the nth request (1-based). Returning nothing leaves the request hanging. */
export type Script = (n: number, req: SeenRequest, res: ServerResponse) => void;

export interface ScriptedServer {
  baseUrl: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export async function startScriptedServer(script: Script): Promise<ScriptedServer> {
  const requests: SeenRequest[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const seen = {
      method: req.method!,
      url: req.url!,
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    };
    requests.push(seen);
    script(requests.length, seen, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export function problem(
  res: ServerResponse,
  status: number,
  code: string,
  headers: Record<string, string> = {},
): void {
  const requestId = `req-${status}-${code}`;
  res.writeHead(status, {
    'Content-Type': 'application/problem+json',
    'X-Request-Id': requestId,
    ...headers,
  });
  res.end(
    JSON.stringify({
      type: `/docs/errors#${code}`,
      title: code,
      status,
      detail: `scripted ${code}`,
      code,
      request_id: requestId,
    }),
  );
}
