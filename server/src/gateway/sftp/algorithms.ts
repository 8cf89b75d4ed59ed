// The ciphers the SFTP server offers. OpenSSH's client picks the first of its own list the server offers,
// and its list starts with chacha20-poly1305: without ssh2's optional native binding (not built where
// npm could not compile it, as here) ssh2 runs that cipher in JavaScript and WebAssembly, a new chacha20
// context and a Poly1305 in wasm per packet, which the profile of the SFTP bench showed as the largest
// cost of a transfer. Leaving it out there makes such clients take AES (CTR with an encrypt-then-MAC
// HMAC, or GCM), which ssh2 runs through OpenSSL; where the binding is built chacha20 stays offered.
import { createRequire } from 'node:module';
import type { Algorithms } from 'ssh2';

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
