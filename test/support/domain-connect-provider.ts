// A real DNS provider's Domain Connect API on loopback (plain HTTP: the platform reaches a provider on
// a non-public address only inside DOMAIN_CONNECT_ALLOWED_NETWORKS, and then over http). It answers
// `GET /v2/{domain}/settings` with the settings a test gives per domain (404 for others) and template
// lookups `GET /v2/domainTemplates/providers/{providerId}/services/{serviceId}` for the templates it
// holds; every request is recorded, and a test may hold a domain's settings answer back.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestProvider {
  /** `host:port` as a `_domainconnect` TXT record names it. */
  hostPort: string;
  port: number;
  /** The settings answered for a domain (any JSON); a domain without any answers 404. */
  settings: Map<string, unknown>;
  /** `providerId/serviceId` pairs whose template lookup answers 200. */
  templates: Set<string>;
  /** Every request as `METHOD path`. */
  requests: string[];
  /** Domains whose settings request waits for its promise before it is answered. */
  stalls: Map<string, Promise<void>>;
  close(): Promise<void>;
}

export async function startTestProvider(address = '127.0.0.1'): Promise<TestProvider> {
  const settings = new Map<string, unknown>();
  const templates = new Set<string>();
  const requests: string[] = [];
  const stalls = new Map<string, Promise<void>>();
  const server: Server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push(`${req.method} ${path}`);
    const settingsOf = /^\/v2\/([^/]+)\/settings$/.exec(path);
    const template = /^\/v2\/domainTemplates\/providers\/([^/]+)\/services\/([^/]+)$/.exec(path);
    if (settingsOf) await stalls.get(settingsOf[1]!);
    if (req.method === 'GET' && settingsOf && settings.has(settingsOf[1]!)) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(settings.get(settingsOf[1]!)));
    } else if (req.method === 'GET' && template && templates.has(`${template[1]}/${template[2]}`)) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ providerId: template[1], serviceId: template[2], version: 1 }));
    } else {
      res.writeHead(404).end();
    }
  });
  server.listen(0, address);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    hostPort: `${address}:${port}`,
    port,
    settings,
    templates,
    requests,
    stalls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Settings as a provider with the synchronous flow answers them, its URLs pointing at `hostPort`. */
export const syncSettings = (hostPort: string, overrides: Record<string, unknown> = {}) => ({
  providerId: 'dnsprovider.example',
  providerName: 'DNSProvider',
  providerDisplayName: 'DNS Provider Inc.',
  urlSyncUX: `http://${hostPort}/sync`,
  urlAsyncUX: `http://${hostPort}/async`,
  urlAPI: `http://${hostPort}`,
  width: 750,
  height: 750,
  ...overrides,
});
