// A second API process (server/src/main.ts, from its bundle: program.ts) on the test app's database and
// data directory, so both share signing keys, the encryption key and every limit.
import { spawn, type ChildProcess } from 'node:child_process';
import type { TestApp } from './app.js';
import { serverArgs } from './program.js';

export interface SecondProcess {
  baseUrl: string;
  stop(): Promise<void>;
}

export async function startSecondProcess(
  app: TestApp,
  env: Record<string, string> = {},
): Promise<SecondProcess> {
  const child: ChildProcess = spawn(process.execPath, await serverArgs(), {
    env: {
      ...process.env,
      PORT: '0',
      DATABASE_URL: app.databaseUrl,
      DATA_DIR: app.config.dataDir,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /API\s+(http:\/\/[\d.:]+)\/api\/v2/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => reject(new Error(`second process exited ${code}: ${out}`)));
  });
  return {
    baseUrl,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
