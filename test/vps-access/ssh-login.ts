// Signing in to a VPS as its customer would: OpenSSH's own client with a key, ssh2 with a password.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sshRun } from '../support/ssh.js';

export interface KeyPair {
  /** The private key's file, for `ssh -i`. */
  file: string;
  publicLine: string;
}

export async function keyPair(dir: string, name: string, type = 'ed25519', bits?: number): Promise<KeyPair> {
  const file = join(dir, name);
  await run('ssh-keygen', [
    '-q',
    '-t',
    type,
    ...(bits ? ['-b', String(bits)] : []),
    '-N',
    '',
    '-C',
    name,
    '-f',
    file,
  ]);
  return { file, publicLine: (await readFile(`${file}.pub`, 'utf8')).trim() };
}

export const keysDir = () => mkdtemp(join(tmpdir(), 'vps-keys-'));
export const removeDir = (dir: string) => rm(dir, { recursive: true, force: true });

/** `ssh -i key -p port root@host id` by OpenSSH: its output, or `refused` when sign-in failed. */
export async function sshByKey(host: string, port: number, key: KeyPair): Promise<string> {
  try {
    return await run('ssh', [
      '-i',
      key.file,
      '-o',
      'StrictHostKeyChecking=no',
      '-o',
      'UserKnownHostsFile=/dev/null',
      '-o',
      'BatchMode=yes',
      '-o',
      'IdentitiesOnly=yes',
      '-o',
      'PasswordAuthentication=no',
      '-o',
      'ConnectTimeout=10',
      '-o',
      'LogLevel=ERROR',
      '-p',
      String(port),
      `root@${host}`,
      'id',
    ]);
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    return /Permission denied/.test(stderr) ? 'refused' : `failed: ${stderr.trim()}`;
  }
}

/** A password sign-in by ssh2 running `id`: its output, or `client-authentication` when refused. */
export const sshByPassword = (host: string, port: number, password: string) =>
  sshRun({ host, port, username: 'root', password });

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: 30_000 }, (err, stdout, stderr) =>
      err ? reject(Object.assign(err, { stderr })) : resolve(stdout),
    );
  });
}
