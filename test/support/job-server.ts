// A real server process for the kill -9 tests of durable operations (reinstall, backup, restore): the
// jobs run in it, FAILPOINT_HOLD parks one in a phase, and the test kills it with SIGKILL and starts the
// next. FAILPOINT_HOLD is never inherited from the test's own environment.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { serverArgs } from './program.js';

export interface ServerProcess {
  pid: number;
  output(): string;
  /** Resolves once the output matches; rejects when the process exits or the deadline passes. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  kill9(): Promise<void>;
  /** SIGTERM, as an operator stops it; resolves with the exit code. */
  stop(): Promise<number | null>;
}

export interface JobServerOptions {
  databaseUrl: string;
  dataDir: string;
  /** Shared with the test's API: both seal and open mail and secrets with it. */
  encryptionKey: string;
  smtpUrl: string;
  env?: Record<string, string>;
}

/** A server running the jobs (server/src/main.ts, from its bundle: program.ts), once it listens. */
export async function startJobServer(options: JobServerOptions): Promise<ServerProcess> {
  const { FAILPOINT_HOLD: _inherited, ...inherited } = process.env;
  const child: ChildProcess = spawn(process.execPath, await serverArgs(), {
    env: {
      ...inherited,
      PORT: '0',
      DATABASE_URL: options.databaseUrl,
      DATA_DIR: options.dataDir,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      WORKER: 'on',
      ENCRYPTION_KEY: options.encryptionKey,
      SMTP_URL: options.smtpUrl,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const listeners = new Set<() => void>();
  const heard = (d: Buffer) => {
    out += d.toString();
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', heard);
  child.stderr!.on('data', heard);
  const exited = once(child, 'exit');
  const running = () => child.exitCode === null && child.signalCode === null;

  const waitFor = (pattern: RegExp, timeoutMs = 30_000) =>
    new Promise<void>((resolve, reject) => {
      const done = (err?: Error) => {
        listeners.delete(check);
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      };
      const check = () => {
        if (pattern.test(out)) done();
        else if (!running())
          done(new Error(`server exited (${child.exitCode ?? child.signalCode}) before ${pattern}:\n${out}`));
      };
      const timer = setTimeout(
        () => done(new Error(`no ${pattern} from the server in ${timeoutMs} ms:\n${out}`)),
        timeoutMs,
      );
      listeners.add(check);
      void exited.then(check);
      check();
    });

  const handle: ServerProcess = {
    pid: child.pid!,
    output: () => out,
    waitFor,
    async kill9() {
      if (!running()) return;
      process.kill(child.pid!, 'SIGKILL');
      await exited;
    },
    async stop() {
      if (running()) child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
  // Starting takes long on a loaded machine (node loads the server's modules first).
  await waitFor(/API\s+http:\/\/[\d.:]+\/api\/v2/, 90_000);
  return handle;
}
