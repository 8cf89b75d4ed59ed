// A UDP port on the edge: each client (address and port) gets a socket of its own towards the unit, so
// the unit's replies find their way back; a client silent for a while is forgotten. The firewall decides
// a client's first datagram and again whenever the rules change (admit is asked per datagram, cheaply).
import dgram from 'node:dgram';
import type { TcpTarget } from './forward-tcp.js';

const IDLE_MS = 60_000;
const MAX_CLIENTS = 4096;

export interface UdpForwarder {
  retarget(target: TcpTarget): void;
  /** Clients (address and port) admitted since it opened, each counted when its session began. */
  connections(): number;
  close(): Promise<void>;
}

interface Session {
  socket: dgram.Socket;
  lastSeen: number;
}

export async function forwardUdp(
  host: string,
  port: number,
  initial: TcpTarget,
  admit: (remoteAddress: string, remotePort: number) => boolean,
): Promise<UdpForwarder> {
  let target = initial;
  let admitted = 0;
  const sessions = new Map<string, Session>();
  const front = dgram.createSocket({ type: 'udp4' });

  const drop = (key: string) => {
    const session = sessions.get(key);
    if (!session) return;
    sessions.delete(key);
    session.socket.close();
  };

  front.on('message', (msg, rinfo) => {
    if (!admit(rinfo.address, rinfo.port)) return;
    const key = `${rinfo.address}:${rinfo.port}`;
    let session = sessions.get(key);
    if (!session) {
      if (sessions.size >= MAX_CLIENTS) {
        // The longest-silent client makes room (Map keeps insertion order; lastSeen refreshes re-insert).
        const oldest = sessions.keys().next().value;
        if (oldest !== undefined) drop(oldest);
      }
      const socket = dgram.createSocket({ type: 'udp4' });
      socket.on('message', (reply) => {
        const s = sessions.get(key);
        if (s) s.lastSeen = Date.now();
        front.send(reply, rinfo.port, rinfo.address);
      });
      socket.on('error', () => drop(key));
      session = { socket, lastSeen: Date.now() };
      sessions.set(key, session);
      admitted += 1;
    } else {
      sessions.delete(key);
      sessions.set(key, session);
      session.lastSeen = Date.now();
    }
    session.socket.send(msg, target.port, target.address);
  });
  front.on('error', () => {
    // Send errors (an unreachable client) are per datagram; nothing to do.
  });

  await new Promise<void>((resolve, reject) => {
    front.once('error', reject);
    front.bind({ address: host, port, exclusive: true }, () => {
      front.off('error', reject);
      resolve();
    });
  });

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [key, session] of sessions) if (now - session.lastSeen > IDLE_MS) drop(key);
  }, IDLE_MS / 2);
  sweep.unref();

  return {
    retarget(next) {
      target = next;
    },
    connections: () => admitted,
    async close() {
      clearInterval(sweep);
      for (const key of [...sessions.keys()]) drop(key);
      await new Promise<void>((resolve) => front.close(() => resolve()));
    },
  };
}
