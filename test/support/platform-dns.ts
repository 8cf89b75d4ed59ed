// The platform's DNS server for a test app (server/src/dns-server/): its own connections to the app's
// database, a free port on loopback, and clients that ask it over UDP and TCP like any resolver.
import dns2 from 'dns2';
import { connect, type Sql } from '../../server/src/db/client.js';
import { startPlatformDns, type PlatformDns } from '../../server/src/dns-server/server.js';
import type { TestApp } from './app.js';

const { Packet } = dns2;
export const RCODE_NAMES: Record<number, string> = {
  0: 'NOERROR',
  1: 'FORMERR',
  3: 'NXDOMAIN',
  4: 'NOTIMP',
  5: 'REFUSED',
};
const TYPE_NAMES = new Map<number, string>(Object.entries(Packet.TYPE).map(([k, v]) => [v as number, k]));

export interface DnsReply {
  rcode: string;
  aa: boolean;
  /** Records as `TYPE name data` strings (A: the address; SRV: `priority weight port target`; NS; SOA: `primary admin`). */
  answers: string[];
  authorities: string[];
  additionals: string[];
}

function show(r: dns2.Packet.Resource & Record<string, unknown>): string {
  const type = TYPE_NAMES.get(r.type) ?? String(r.type);
  const name = String(r.name).toLowerCase();
  switch (type) {
    case 'A':
      return `A ${name} ${String(r.address)}`;
    case 'NS':
      return `NS ${name} ${String(r.ns)}`;
    case 'SRV':
      return `SRV ${name} ${String(r.priority)} ${String(r.weight)} ${String(r.port)} ${String(r.target)}`;
    case 'SOA':
      return `SOA ${name} ${String(r.primary)} ${String(r.admin)}`;
    default:
      return `${type} ${name}`;
  }
}

export interface TestPlatformDns {
  dns: PlatformDns;
  sql: Sql;
  /** One question over `transport`, the reply as strings. */
  ask(name: string, type: string, transport?: 'udp' | 'tcp'): Promise<DnsReply>;
  /** Resolves once the server serves every change committed so far. */
  caughtUp(): Promise<void>;
  stop(): Promise<void>;
}

export async function startTestPlatformDns(app: TestApp, port = 0): Promise<TestPlatformDns> {
  const sql = connect(app.databaseUrl, { max: 2 });
  const dns = await startPlatformDns({
    sql,
    host: '127.0.0.1',
    port,
    platformDomain: app.config.platformDomain,
    ingressAddress: app.config.host,
    log: { info: () => {}, warn: () => {} },
  });
  const udp = dns2.UDPClient({ dns: '127.0.0.1', port: dns.port, timeout: 5_000, retryOverTCP: false });
  const tcp = dns2.TCPClient({ dns: '127.0.0.1', port: dns.port });
  return {
    dns,
    sql,
    async ask(name, type, transport = 'udp') {
      const reply = await (transport === 'udp' ? udp : tcp)(name, type, Packet.CLASS.IN, {
        recursive: false,
      });
      const list = (rs: unknown[]) =>
        rs.map((r) => show(r as dns2.Packet.Resource & Record<string, unknown>)).sort();
      return {
        rcode: RCODE_NAMES[reply.header.rcode] ?? String(reply.header.rcode),
        aa: reply.header.aa === 1,
        answers: list(reply.answers),
        authorities: list(reply.authorities),
        additionals: list(reply.additionals),
      };
    },
    async caughtUp() {
      const [state] = await app.sql<{ generation: string }[]>`select generation from dns_state`;
      const want = Number(state!.generation);
      const deadline = Date.now() + 10_000;
      while (dns.generation() < want) {
        if (Date.now() > deadline) throw new Error(`platform DNS stuck at ${dns.generation()} < ${want}`);
        await dns.reload();
      }
    },
    async stop() {
      await dns.stop();
      await sql.end({ timeout: 1 });
    },
  };
}
