// The SFTP server's transport: which ciphers it offers, and how its packets reach the socket.
//
// Ciphers. OpenSSH's client takes the first of its own list the server offers, and its list starts
// with chacha20-poly1305: without ssh2's optional native binding (not built where npm could not compile
// it, as here) ssh2 runs that cipher in JavaScript and WebAssembly, a new chacha20 context and a
// Poly1305 in wasm per packet, which the profile of the SFTP bench showed as the largest cost of a
// transfer. Leaving it out there makes such clients take AES (CTR with an encrypt-then-MAC HMAC, or
// GCM), which ssh2 runs through OpenSSL; where the binding is built chacha20 stays offered.
//
// Writes. ssh2 hands each packet to the socket in pieces (length, ciphertext, MAC), and every piece
// written to an idle socket is a send of its own; with Nagle's algorithm on, the small MAC then waited
// for the peer's acknowledgement, and a transfer spent most of its time waiting (the bench: a 64 MiB
// upload 2.6-3.1 s, 1.2-1.8 s with the pieces of a tick sent together). The gateway owns the listening
// socket and hands each connection to ssh2 (injectSocket, ssh2's public way to do so): a connection's
// writes within one tick are corked and leave in one writev at its end, and Nagle's algorithm is off,
// since that already coalesces what it would.
import { createRequire } from 'node:module';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import ssh2, { type Algorithms } from 'ssh2';

const CHACHA20 = 'chacha20-poly1305@openssh.com';

function nativeCrypto(): boolean {
  try {
    const internals = createRequire(import.meta.url)('ssh2/lib/protocol/crypto.js') as {
      bindingAvailable?: unknown;
    };
    return internals.bindingAvailable === true;
  } catch {
    // ssh2 moved its internals: treat its binding as absent, which costs speed, not interoperability.
    return false;
  }
}

/** The `algorithms` of the gateway's ssh2 Server (and of the SFTP bench, which measures it). */
export const SFTP_ALGORITHMS: Algorithms = nativeCrypto()
  ? {}
  : { cipher: { remove: [CHACHA20], append: [], prepend: [] } };

/** Sends what is written to `socket` within one tick as one write, at the tick's end. */
export function coalesceWrites(socket: Socket): void {
  socket.setNoDelay(true);
  const write = socket.write;
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  socket.write = function (this: Socket, ...args: Parameters<Socket['write']>) {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    return write.apply(this, args);
  } as Socket['write'];
}

/**
 * An ssh2 Server with the gateway's transport: `ssh` handles connections (its own listen is never
 * used), `listener` is what listens and closes.
 */
export function sftpTransport(
  config: Omit<ssh2.ServerConfig, 'algorithms'>,
  onClient: ConstructorParameters<typeof ssh2.Server>[1],
): { ssh: ssh2.Server; listener: NetServer } {
  const ssh = new ssh2.Server({ ...config, algorithms: SFTP_ALGORITHMS }, onClient);
  const listener = createServer((socket) => {
    coalesceWrites(socket);
    ssh.injectSocket(socket);
  });
  return { ssh, listener };
}
