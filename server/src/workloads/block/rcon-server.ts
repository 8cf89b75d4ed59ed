// Minecraft's RCON for the block game (vanilla's RconClient.java): a password-checked Source RCON
// listener on the unit's address (the edge never forwards it), answering each command with its reply cut
// into 4096-byte packets and any other request type with "Unknown request <hex>", in order. Only the
// platform knows the password (its environment).
import { createServer, type Server } from 'node:net';
import { encode, PacketDecoder, TYPE } from '../../games/rcon/packet.js';

const FRAGMENT = 4096;

export function startRconServer(
  at: { host: string; port: number },
  password: string,
  run: (command: string) => Promise<string>,
): Server {
  const server = createServer((socket) => {
    socket.setNoDelay(true);
    socket.on('error', () => undefined);
    const decoder = new PacketDecoder();
    let authed = false;
    // Requests are answered one after another, as vanilla's thread does.
    let turn: Promise<void> = Promise.resolve();
    socket.on('data', (chunk) => {
      let packets;
      try {
        packets = decoder.push(chunk);
      } catch {
        socket.destroy();
        return;
      }
      for (const packet of packets) {
        turn = turn.then(async () => {
          if (packet.type === TYPE.auth) {
            authed = packet.body === password;
            socket.write(encode({ id: authed ? packet.id : -1, type: TYPE.authResponse, body: '' }));
          } else if (!authed) {
            socket.destroy();
          } else if (packet.type === TYPE.command) {
            const body = Buffer.from(
              await run(packet.body).catch(() => 'An unexpected error occurred'),
              'utf8',
            );
            let offset = 0;
            do {
              const part = body.subarray(offset, offset + FRAGMENT).toString('utf8');
              socket.write(encode({ id: packet.id, type: TYPE.response, body: part }));
              offset += FRAGMENT;
            } while (offset < body.length);
          } else {
            socket.write(
              encode({
                id: packet.id,
                type: TYPE.response,
                body: `Unknown request ${packet.type.toString(16)}`,
              }),
            );
          }
        });
      }
    });
  });
  server.listen(at.port, at.host);
  return server;
}
