// The SSH server of a machine (DECISIONS.md §6 "Network": a VPS's system allocation forwards to port 22
// of its machine). It listens on the machine's own address and accepts exactly the machine's current
// credentials (substrate/local/access.ts: root's authorized keys, and the password while one is set),
// read at each attempt: after a reinstall cleared them, the old password fails from outside too. It serves
// machines that run no sshd of their own (LXD's, and a local host that cannot confine): a session answers
// one line naming the machine and its substrate and closes with status 0.
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import ssh2 from 'ssh2';
import { readIfPresent, writeFileAtomic } from '../substrate/local/atomic-file.js';
import { checkMachineAccess, machineAuthorizedKeys } from '../substrate/local/access.js';
import { ROOTFS } from '../substrate/local/layout.js';
import { assertInsideVolume } from '../substrate/local/volumes.js';
import type { AgentLog } from './log.js';
import { ed25519KeyPair } from '../ssh/ed25519.js';

export const MACHINE_SSH_PORT = 22;
/** The machine's host key on its volume: a reinstall removes it, and the fresh install makes a new one. */
const HOST_KEY = join(ROOTFS, 'etc', 'ssh', 'ssh_host_ed25519_key');

async function hostKey(volumeDir: string): Promise<string> {
  const path = join(volumeDir, HOST_KEY);
  await assertInsideVolume(volumeDir, path);
  const existing = await readIfPresent(path);
  if (existing !== null) return existing;
  const { private: key } = ed25519KeyPair();
  await mkdir(dirname(path), { recursive: true, mode: 0o755 });
  await writeFileAtomic(path, key, 0o600);
  return key;
}

const METHODS: ssh2.AuthenticationType[] = ['publickey', 'password'];

/**
 * root's authorized keys (a key query is answered yes for a listed key, a signature is checked against
 * it), or root's password while one is set; both read from the machine's files at each attempt.
 */
async function authenticate(volumeDir: string, ctx: ssh2.AuthContext): Promise<boolean> {
  if (ctx.username !== 'root') return false;
  if (ctx.method === 'password') return checkMachineAccess(volumeDir, ctx.username, ctx.password);
  if (ctx.method !== 'publickey') return false;
  for (const line of await machineAuthorizedKeys(volumeDir)) {
    const key = ssh2.utils.parseKey(line);
    // The blob decides, not the algorithm's name: an RSA key is offered as rsa-sha2-256/512 too.
    if (key instanceof Error || !key.getPublicSSH().equals(ctx.key.data)) continue;
    if (!ctx.signature || !ctx.blob) return true;
    return key.verify(ctx.blob, ctx.signature, ctx.hashAlgo) === true;
  }
  return false;
}

export interface MachineSsh {
  close(): Promise<void>;
}

export async function startMachineSsh(
  machine: { id: string; address: string; volumeDir: string; substrate: string },
  log: AgentLog,
  port = MACHINE_SSH_PORT,
): Promise<MachineSsh> {
  const server = new ssh2.Server({ hostKeys: [await hostKey(machine.volumeDir)] }, (client) => {
    client.on('authentication', (ctx) => {
      authenticate(machine.volumeDir, ctx).then(
        (ok) => (ok ? ctx.accept() : ctx.reject(METHODS)),
        () => ctx.reject(METHODS),
      );
    });
    client.on('ready', () => {
      client.on('session', (accept) => {
        const session = accept();
        const answer = (acceptStream: () => ssh2.ServerChannel) => {
          const stream = acceptStream();
          stream.write(`machine ${machine.id} (${machine.substrate} substrate)\r\n`);
          stream.exit(0);
          stream.end();
        };
        session.on('pty', (acceptPty) => acceptPty?.());
        session.on('exec', (acceptExec) => answer(acceptExec));
        session.on('shell', (acceptShell) => answer(acceptShell));
      });
    });
    client.on('error', () => {
      // A client that goes away mid-handshake is not the machine's problem.
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, machine.address, () => {
      server.off('error', reject);
      resolve();
    });
  });
  log.info(`ssh listening on ${machine.address}:${port}`);
  return {
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
