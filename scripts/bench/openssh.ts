// An OpenSSH server of the bench's own on loopback, for baselines that are what a customer runs without the
// platform (`ssh -T -p PORT 127.0.0.1 COMMAND`): its own host key, its own config, a client key it generates
// and authorizes, and the default cipher (nothing pinned, so it is what an unconfigured ssh negotiates).
// Needs root, as sshd's privilege separation does; sign-in is as the user running the bench.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';

const SSHD = '/usr/sbin/sshd';

export interface OpenSsh {
  /** Runs `command` on the server as `ssh -T` does (no terminal), stdin and stdout piped. */
  run(command: string): ChildProcess;
  close(): Promise<void>;
}

function keygen(file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file], { stdio: 'ignore' });
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`ssh-keygen exited ${code}`))));
  });
}

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Starts sshd with its files in `dir` (a directory of the caller's, removed by the caller). */
export async function startOpenSsh(dir: string): Promise<OpenSsh> {
  await keygen(join(dir, 'host'));
  await keygen(join(dir, 'client'));
  await writeFile(join(dir, 'authorized_keys'), await readFile(join(dir, 'client.pub')));
  await mkdir('/run/sshd', { recursive: true });
  const port = await freePort();
  await writeFile(
    join(dir, 'sshd_config'),
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${join(dir, 'host')}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      'PermitRootLogin prohibit-password',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      // The bench's directory is under the world-writable /tmp, which StrictModes refuses.
      'StrictModes no',
      '',
    ].join('\n'),
  );
  const sshd = spawn(SSHD, ['-D', '-e', '-f', join(dir, 'sshd_config')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    sshd.once('error', reject);
    sshd.once('exit', (code) => reject(new Error(`sshd exited ${code}: ${log.trim()}`)));
    sshd.stderr.on('data', (text: Buffer) => {
      log += text.toString();
      if (log.includes('Server listening')) resolve();
    });
  });
  sshd.removeAllListeners('exit');
  sshd.stderr.resume();
  const client = [
    '-T',
    '-p',
    String(port),
    '-i',
    join(dir, 'client'),
    '-F',
    '/dev/null',
    '-o',
    'BatchMode=yes',
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    `UserKnownHostsFile=${join(dir, 'known_hosts')}`,
    '-o',
    'LogLevel=ERROR',
    '-l',
    userInfo().username,
    '127.0.0.1',
  ];
  return {
    run: (command) => spawn('ssh', [...client, command], { stdio: ['pipe', 'pipe', 'inherit'] }),
    async close() {
      if (sshd.exitCode !== null) return;
      const exited = once(sshd, 'exit');
      sshd.kill('SIGTERM');
      await exited;
    },
  };
}
