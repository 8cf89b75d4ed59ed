// An RCON server that behaves as vanilla Minecraft's (RconClient.java): auth answered with its id or -1,
// command replies cut into 4096-byte packets, an unknown request type answered "Unknown request <hex>",
// requests handled in order. Hooks let a test make it stall, garble, or write byte by byte.
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { encode, PacketDecoder } from '../../server/src/games/rcon/packet.js';

export interface PeerBehaviour {
  password: string;
  /** The reply to a command; null: never answer it (a stall). */
  reply(command: string): string | null;
  /** Bytes written instead of a command's reply (a malformed packet). */
  garble?(command: string): Buffer | null;
  /** Write every packet one byte at a time (TCP splits anywhere). */
  trickle?: boolean;
}

export interface RconPeer {
  port: number;
  connections: number;
  commands: string[];
  /** How many commands each read from a client held (more than one: the client sent them together). */
  arrivals: number[];
  /** Ends every open connection (a server restart). */
  dropAll(): void;
  close(): Promise<void>;
}

const FRAGMENT = 4096;

export async function startRconPeer(
  behaviour: PeerBehaviour,
  at: { host: string; port: number } = { host: '127.0.0.1', port: 0 },
): Promise<RconPeer> {
  const sockets = new Set<Socket>();
  const state: RconPeer = {
    port: 0,
    connections: 0,
    commands: [],
    arrivals: [],
    dropAll: () => sockets.forEach((s) => s.destroy()),
    close: () =>
      new Promise((resolve) => {
        sockets.forEach((s) => s.destroy());
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((socket) => {
    state.connections += 1;
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const decoder = new PacketDecoder();
    let authed = false;
    const write = (bytes: Buffer) => {
      if (!behaviour.trickle) return void socket.write(bytes);
      for (const byte of bytes) socket.write(Buffer.from([byte]));
    };
    socket.on('data', (chunk) => {
      const packets = decoder.push(chunk);
      const commands = packets.filter((p) => p.type === 2).length;
      if (commands > 0) state.arrivals.push(commands);
      for (const packet of packets) {
        if (packet.type === 3) {
          authed = packet.body === behaviour.password;
          write(encode({ id: authed ? packet.id : -1, type: 2, body: '' }));
          continue;
        }
        if (!authed) {
          socket.destroy();
          return;
        }
        if (packet.type === 2) {
          state.commands.push(packet.body);
          const garbled = behaviour.garble?.(packet.body);
          if (garbled) {
            write(garbled);
            continue;
          }
          const reply = behaviour.reply(packet.body);
          if (reply === null) return; // stalls: nothing after this is answered either
          const body = Buffer.from(reply, 'utf8');
          let offset = 0;
          do {
            write(
              encode({
                id: packet.id,
                type: 0,
                body: body.subarray(offset, offset + FRAGMENT).toString('utf8'),
              }),
            );
            offset += FRAGMENT;
          } while (offset < body.length);
        } else {
          write(encode({ id: packet.id, type: 0, body: `Unknown request ${packet.type.toString(16)}` }));
        }
      }
    });
  });
  server.listen(at.port, at.host);
  await once(server, 'listening');
  state.port = (server.address() as { port: number }).port;
  return state;
}
