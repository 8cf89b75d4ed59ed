// Signs in to an SSH server with a password and runs `id`: answers its output, or the failure's level
// (`client-authentication` for a refused password) or message.
import { Client as SshClient } from 'ssh2';

export function sshRun(options: {
  host: string;
  port: number;
  username: string;
  password: string;
  localAddress?: string;
}): Promise<string> {
  return new Promise((resolve) => {
    const client = new SshClient();
    client
      .on('ready', () => {
        client.exec('id', (err, stream) => {
          if (err) return resolve(`exec failed: ${err.message}`);
          let out = '';
          stream.on('data', (d: Buffer) => (out += d.toString()));
          stream.on('close', () => {
            client.end();
            resolve(out);
          });
        });
      })
      .on('error', (err: Error & { level?: string }) => resolve(err.level ?? err.message))
      .connect({ ...options, readyTimeout: 10_000 });
  });
}
