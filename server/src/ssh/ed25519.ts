// An Ed25519 key pair in OpenSSH's format that ssh2 can read back. ssh2's generateKeyPairSync strips
// every leading zero byte of the public key, so about one key in 256 (a public key beginning with 0x00)
// is written short and ssh2's own parseKey then refuses it as malformed (mscdex/ssh2#1390, #1513): a
// host key that would fail the server's start, or a machine's SSH for good. Such a pair is made again.
import ssh2 from 'ssh2';

export function ed25519KeyPair(): { private: string; public: string } {
  for (;;) {
    const pair = ssh2.utils.generateKeyPairSync('ed25519');
    const readable = [pair.private, pair.public].every((key) => !(ssh2.utils.parseKey(key) instanceof Error));
    if (readable) return pair;
  }
}
