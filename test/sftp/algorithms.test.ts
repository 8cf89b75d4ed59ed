// The SFTP server's ciphers (server/src/gateway/sftp/algorithms.ts): a client that asks for
// chacha20-poly1305 first, as OpenSSH's does, gets it only where ssh2 runs it natively, and otherwise an
// AES cipher that ssh2 runs through OpenSSL.
import { createRequire } from 'node:module';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import ssh2 from 'ssh2';
import { describe, expect, it } from 'vitest';
import { SFTP_ALGORITHMS } from '../../server/src/gateway/sftp/algorithms.js';

// OpenSSH 9's default order.
const OPENSSH_CIPHERS = [
  'chacha20-poly1305@openssh.com',
  'aes128-ctr',
  'aes192-ctr',
  'aes256-ctr',
  'aes128-gcm@openssh.com',
  'aes256-gcm@openssh.com',
] as const;

describe('SFTP_ALGORITHMS', () => {
  it('lets an OpenSSH-ordered client choose chacha20-poly1305 only where ssh2 has its native binding', async () => {
    const native = (
      createRequire(import.meta.url)('ssh2/lib/protocol/crypto.js') as { bindingAvailable: boolean }
    ).bindingAvailable;
    const key = ssh2.utils.generateKeyPairSync('ed25519');
    const server = new ssh2.Server({ hostKeys: [key.private], algorithms: SFTP_ALGORITHMS }, (client) => {
      client.on('error', () => undefined);
      client.on('authentication', (ctx) => ctx.accept());
    });
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
});
