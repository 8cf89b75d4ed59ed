// The platform's authoritative DNS server (DECISIONS.md §6 "DNS and domains"): dns2's UDP and TCP
// servers on HOST:DNS_PORT answering from an in-memory ZoneSet (zones.ts). dns2 rather than PowerDNS or
// knot: it needs no second copy of the records (PowerDNS's schema, knot's zone files) kept in step with
// PostgreSQL, and an answer is a lookup in a Map, never a database query, so the database's load and
// latency never reach a resolver. The set is rebuilt from PostgreSQL when `dns_state` is notified, and a
// cheap generation poll (every `pollMs`) catches a notification lost with a dropped connection, so a
// change is served within a second either way.
import dns2 from 'dns2';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Sql } from '../db/client.js';
import { currentGeneration, readSnapshot } from './store.js';
import { answer, buildZones, type Record, type ZoneSet } from './zones.js';

const { Packet } = dns2;
const RCODE = { NOERROR: 0, FORMERR: 1, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;
const TYPE_NAMES = new Map<number, string>(Object.entries(Packet.TYPE).map(([k, v]) => [v as number, k]));

export interface PlatformDnsOptions {
  sql: Sql;
  host: string;
  /** DNS_PORT; 0 picks a free one (tests). UDP and TCP share it. */
  port: number;
  platformDomain: string;
  /** Where web services' `apps.` hosts point (the HTTP ingress's address): HOST. */
  ingressAddress: string;
  /** How often the generation is compared when no notification came (default 500 ms). */
  pollMs?: number;
  log: Pick<Logger, 'info' | 'warn'>;
}

export interface PlatformDns {
  /** `HOST:PORT`, for DNS_SERVERS. */
  readonly address: string;
  readonly port: number;
  /** The generation of the zones being served. */
  generation(): number;
  /** Rebuilds the zones from PostgreSQL now (the notification handler, and tests). */
  reload(): Promise<void>;
  stop(): Promise<void>;
}

function toResource(r: Record): dns2.Packet.Resource {
  const base = { name: r.name, class: Packet.CLASS.IN, ttl: r.ttl, type: Packet.TYPE[r.type] };
  switch (r.type) {
    case 'A':
      return { ...base, address: r.address } as dns2.Packet.Resource;
    case 'NS':
      return { ...base, ns: r.ns } as unknown as dns2.Packet.Resource;
    case 'SRV':
      return {
        ...base,
        priority: r.priority,
        weight: r.weight,
        port: r.port,
        target: r.target,
      } as unknown as dns2.Packet.Resource;
    case 'SOA':
      return {
        ...base,
        primary: r.primary,
        admin: r.admin,
        serial: r.serial,
        refresh: r.refresh,
        retry: r.retry,
        expiration: r.expiration,
        minimum: r.minimum,
      } as unknown as dns2.Packet.Resource;
  }
}

export async function startPlatformDns(options: PlatformDnsOptions): Promise<PlatformDns> {
  const { sql, log } = options;
  const zoneOptions = { platformDomain: options.platformDomain, ingressAddress: options.ingressAddress };
  let zones: ZoneSet = buildZones(await readSnapshot(sql), zoneOptions);
  let stopped = false;

  // One reload at a time; a notification during one asks for one more after it.
  let running: Promise<void> | null = null;
  let again = false;
  const reload = (): Promise<void> => {
    if (stopped) return Promise.resolve();
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        zones = buildZones(await readSnapshot(sql), zoneOptions);
      } while (again && !stopped);
    })()
      .catch((err: unknown) =>
        log.warn({ err: (err as Error).message }, 'platform DNS reload failed; serving the last zones'),
      )
      .finally(() => (running = null));
    return running;
  };

  const handle: dns2.DnsHandler = (request, send) => {
    const response = Packet.createResponseFromRequest(request);
    response.header.aa = 1;
    response.header.ra = 0;
    const [question] = request.questions;
    if (request.header.opcode !== 0) response.header.rcode = RCODE.NOTIMP;
    else if (!question || request.questions.length !== 1) response.header.rcode = RCODE.FORMERR;
    else {
      const result = answer(zones, question.name, TYPE_NAMES.get(question.type) ?? `TYPE${question.type}`);
      if (result.rcode === 'REFUSED') {
        response.header.aa = 0;
        response.header.rcode = RCODE.REFUSED;
      } else {
        response.header.rcode = RCODE[result.rcode];
        // The owner name as asked (a resolver's 0x20 case randomisation must read back unchanged).
        const asked = (r: Record) =>
          r.name === question.name.toLowerCase().replace(/\.$/, '') ? { ...r, name: question.name } : r;
        response.answers.push(...result.answers.map((r) => toResource(asked(r))));
        response.authorities.push(...result.authorities.map(toResource));
        response.additionals.push(...result.additionals.map(toResource));
      }
    }
    void send(response);
  };

  const udp = dns2.createUDPServer(handle);
  await udp.listen(options.port, options.host);
  const { port } = udp.address();
  const tcp = dns2.createTCPServer(handle);
  const sockets = new Set<Socket>();
  tcp.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  try {
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(port, options.host);
      tcp.once('listening', () => resolve());
    });
  } catch (err) {
    await new Promise<void>((resolve) => udp.close(() => resolve()));
    throw err;
  }
  if ((tcp.address() as AddressInfo).port !== port) throw new Error('DNS: UDP and TCP did not get one port');

  const subscription = await sql
    .listen('dns_state', () => void reload())
    .catch((err: unknown) => {
      log.warn({ err: (err as Error).message }, 'platform DNS cannot LISTEN; polling only');
      return null;
    });
  const poll = setInterval(() => {
    void currentGeneration(sql)
      .then((g) => (g !== zones.generation ? reload() : undefined))
      .catch((err: unknown) => log.warn({ err: (err as Error).message }, 'platform DNS poll failed'));
  }, options.pollMs ?? 500);

  log.info({ host: options.host, port, zones: zones.zones.map((z) => z.apex) }, 'platform DNS running');
  return {
    address: `${options.host}:${port}`,
    port,
    generation: () => zones.generation,
    reload,
    async stop() {
      stopped = true;
      clearInterval(poll);
      await subscription?.unlisten().catch(() => undefined);
      await running;
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}
