// A TCP listener on the public port that splices each accepted connection to the unit's address. Bytes
// go kernel socket to kernel socket through this process only (never through the API process).
import net from 'node:net';

export interface TcpTarget {
  address: string;
  port: number;
}

export interface TcpForwarder {
  readonly server: net.Server;
  retarget(target: TcpTarget): void;
  /** Connections admitted and forwarded since it opened. */
  connections(): number;
  close(): Promise<void>;
}

/**
 * Listens on host:port; `admit(remoteAddress, remotePort)` decides each connection (the firewall): a
 * refused one is reset at once, before anything reaches the unit.
 */
export async function forwardTcp(
  host: string,
  port: number,
  initial: TcpTarget,
  admit: (remoteAddress: string, remotePort: number) => boolean,
): Promise<TcpForwarder> {
  let target = initial;
  let admitted = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer({ noDelay: true }, (client) => {
    sockets.add(client);
    client.once('close', () => sockets.delete(client));
    const from = (client.remoteAddress ?? '').replace(/^::ffff:/, '');
    if (!admit(from, client.remotePort ?? 0)) {
      client.resetAndDestroy();
      return;
    }
    admitted += 1;
    const upstream = net.connect({ host: target.address, port: target.port, noDelay: true });
    sockets.add(upstream);
    upstream.once('close', () => sockets.delete(upstream));
    client.pipe(upstream);
    upstream.pipe(client);
    // A unit that is down resets the client, as a closed port would.
    upstream.once('error', () => client.resetAndDestroy());
    client.once('error', () => upstream.destroy());
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', () => {
    // A listening server reports nothing further we act on; close() ends it.
  });
  return {
    server,
    retarget(next) {
      target = next;
    },
    connections: () => admitted,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}
