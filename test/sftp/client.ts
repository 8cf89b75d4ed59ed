// ssh2's client against the gateway's SFTP server: sign in, then the promise forms of the calls used.
import { Client, type SFTPWrapper } from 'ssh2';
import { fingerprintOf } from '../../server/src/gateway/sftp/host-key.js';

export interface SftpClient {
  client: Client;
  sftp: SFTPWrapper;
  /** The host key fingerprint the server presented. */
  fingerprint: string;
  /** Resolves when the connection closes (the server ended it, or we did). */
  closed: Promise<void>;
  end(): void;
}

/** Signs in; rejects with the client's error (an `authentication` level one for a refused password). */
export function signIn(port: number, username: string, password: string): Promise<SftpClient> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    let fingerprint = '';
    const closed = new Promise<void>((done) => client.once('close', () => done()));
    client.once('error', reject);
    client.once('ready', () => {
      client.sftp((err, sftp) => {
        if (err) return reject(err);
        client.removeListener('error', reject);
        client.on('error', () => undefined);
        resolve({ client, sftp, fingerprint, closed, end: () => client.end() });
      });
    });
    client.connect({
      host: '127.0.0.1',
      port,
      username,
      password,
      readyTimeout: 30_000,
      tryKeyboard: false,
      hostVerifier: (key: Buffer) => {
        fingerprint = fingerprintOf(key);
        return true;
      },
    });
  });
}

/** Signs in without asking for the sftp subsystem (for shell and exec attempts). */
export function connectOnly(port: number, username: string, password: string): Promise<Client> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    client.once('error', reject);
    client.once('ready', () => {
      client.removeListener('error', reject);
      client.on('error', () => undefined);
      resolve(client);
    });
    client.connect({
      host: '127.0.0.1',
      port,
      username,
      password,
      readyTimeout: 30_000,
      hostVerifier: () => true,
    });
  });
}

type Cb<T> = (err?: Error | null, value?: T) => void;
export function call<T = void>(fn: (cb: Cb<T>) => void): Promise<T> {
  return new Promise((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value as T))));
}

/** The SFTP status code a call failed with (2 no such file, 3 permission denied, 4 failure, 8 unsupported). */
export async function sftpCode(p: Promise<unknown>): Promise<number | 'ok'> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'number') return code;
    throw err;
  }
}
