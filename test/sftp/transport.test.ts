// The SFTP server's transport (server/src/gateway/sftp/transport.ts): a client that asks for
// chacha20-poly1305 first, as OpenSSH's does, gets it only where ssh2 runs it natively, and otherwise an
// AES cipher that ssh2 runs through OpenSSL; what a connection writes within one tick leaves together.
import { createRequire } from 'node:module';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo } from 'node:net';
import ssh2 from 'ssh2';
import { describe, expect, it } from 'vitest';
import { coalesceWrites, sftpTransport } from '../../server/src/gateway/sftp/transport.js';
import { ed25519KeyPair } from '../../server/src/ssh/ed25519.js';

// OpenSSH 9's default order.
const OPENSSH_CIPHERS = [
  'chacha20-poly1305@openssh.com',
  'aes128-ctr',
  'aes192-ctr',
  'aes256-ctr',
  'aes128-gcm@openssh.com',
  'aes256-gcm@openssh.com',
] as const;

describe('sftpTransport', () => {
  it('lets an OpenSSH-ordered client choose chacha20-poly1305 only where ssh2 has its native binding', async () => {
    const native = (
      createRequire(import.meta.url)('ssh2/lib/protocol/crypto.js') as { bindingAvailable: boolean }
    ).bindingAvailable;
    const key = ed25519KeyPair();
    const server = sftpTransport({ hostKeys: [key.private] }, (client) => {
      client.on('error', () => undefined);
      client.on('authentication', (ctx) => ctx.accept());
    }).listener;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const client = new ssh2.Client();
    try {
      const negotiated = new Promise<ssh2.NegotiatedAlgorithms>((resolve, reject) => {
        client.on('handshake', resolve).on('error', reject);
      });
      client.connect({
        host: '127.0.0.1',
        port: (server.address() as AddressInfo).port,
        username: 'x',
        password: 'y',
        algorithms: { cipher: [...OPENSSH_CIPHERS] },
      });
      const { cs, sc } = await negotiated;
      const expected = native ? 'chacha20-poly1305@openssh.com' : 'aes128-ctr';
      expect([cs.cipher, sc.cipher]).toEqual([expected, expected]);
    } finally {
      client.end();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('hands the pieces one tick writes (as ssh2 writes a packet) to the socket as one write', async () => {
    const handed: number[][] = [];
    const server = createServer((socket) => {
      coalesceWrites(socket);
      // The Writable contract: _write takes one chunk to send, _writev several at once.
      const spied = socket as unknown as {
        _write: (chunk: Buffer, ...rest: unknown[]) => void;
        _writev: (chunks: { chunk: Buffer }[], ...rest: unknown[]) => void;
      };
      const write = spied._write.bind(socket);
      const writev = spied._writev.bind(socket);
      spied._write = (chunk, ...rest) => (handed.push([chunk.length]), write(chunk, ...rest));
      spied._writev = (chunks, ...rest) => (
        handed.push(chunks.map((c) => c.chunk.length)),
        writev(chunks, ...rest)
      );
      // Length, ciphertext and MAC, as ssh2's encrypt-then-MAC ciphers hand over a packet.
      socket.write(Buffer.alloc(4, 1));
      socket.write(Buffer.alloc(32 * 1024, 2));
      socket.write(Buffer.alloc(32, 3));
      socket.end();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
      const chunks: Buffer[] = [];
      client.on('data', (chunk: Buffer) => chunks.push(chunk));
      await once(client, 'end');
      expect(Buffer.concat(chunks).length).toBe(4 + 32 * 1024 + 32);
      expect(handed).toEqual([[4, 32 * 1024, 32]]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
