// A program `npm start` runs as its own child process (the local edge, the gateway): its bytes never pass
// through the API process, and its crash never takes the API down. It gets this process's environment
// plus the database's URL; when it dies it is started again after a pause while the server runs; the
// server's stop ends it (SIGTERM, then SIGKILL after a grace), and a server killed by SIGKILL takes it
// along through the stdin pipe it watches (parent-pipe.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { CHILD_STDIO, WITH_PARENT_ARG } from './parent-pipe.js';
import { programArgs } from './program-bundle.js';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const STOP_GRACE_MS = 5_000;

export interface ChildProgram {
  stop(): Promise<void>;
}

export interface ChildProgramOptions {
  /** Its name in the log: `edge`, `gateway`. */
  name: string;
  /** The program's main module (a file URL or path of a .ts file, run from its bundle: program-bundle.ts). */
  main: string;
  databaseUrl: string;
  restartMs: number;
  log: Pick<Logger, 'warn'>;
}

export function startChildProgram(options: ChildProgramOptions): ChildProgram {
  const { name, log, restartMs } = options;
  const main = options.main.startsWith('file:') ? fileURLToPath(options.main) : options.main;
  let child: ChildProcess | null = null;
  let stopping = false;
  let restart: NodeJS.Timeout | null = null;

  // Made once: a restart runs what the first start ran.
  const args = programArgs(main);

  const launch = async () => {
    restart = null;
    const programArgv = await args;
    if (stopping) return;
    const proc = spawn(process.execPath, [...programArgv, WITH_PARENT_ARG], {
      cwd: REPO_ROOT,
      env: { ...process.env, DATABASE_URL: options.databaseUrl },
      stdio: CHILD_STDIO,
    });
    child = proc;
    proc.once('exit', (code, signal) => {
      child = null;
      if (stopping) return;
      log.warn({ code, signal }, `${name} exited; starting it again in ${restartMs} ms`);
      restart = setTimeout(() => void launch(), restartMs);
    });
    proc.once('error', () => {
      // Reported by 'exit' (or never started: the restart timer is not armed, and the log says so).
      log.warn(`${name} could not be started`);
    });
  };
  void launch();

  return {
    async stop() {
      stopping = true;
      if (restart) clearTimeout(restart);
      const proc = child;
      if (!proc || proc.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
