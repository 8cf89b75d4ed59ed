// The gateway as a child of `npm start` (its own process: a gateway crash never takes the API down, and
// console bytes never pass through the API process). It gets the API's environment plus the database's
// URL; when it dies it is started again after a pause, and the API's SIGTERM stops it first.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import { CHILD_STDIO, WITH_PARENT_ARG } from '../process/parent-pipe.js';

const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const RESTART_MS = 2_000;
const STOP_GRACE_MS = 5_000;

export interface GatewayChild {
  stop(): Promise<void>;
}

export function startGatewayChild(databaseUrl: string, log: Logger): GatewayChild {
  let child: ChildProcess | null = null;
  let stopping = false;
  let restart: NodeJS.Timeout | null = null;

  const launch = () => {
    restart = null;
    if (stopping) return;
    // stdin a pipe the child watches: a parent killed with SIGKILL takes its gateway with it.
    const proc = spawn(process.execPath, ['--import', TSX_LOADER, MAIN, WITH_PARENT_ARG], {
      cwd: REPO_ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl },
      stdio: CHILD_STDIO,
    });
    child = proc;
    proc.once('exit', (code, signal) => {
      child = null;
      if (stopping) return;
      log.warn({ code, signal }, `gateway exited; starting it again in ${RESTART_MS} ms`);
      restart = setTimeout(launch, RESTART_MS);
    });
    proc.once('error', () => log.warn('gateway could not be started'));
  };
  launch();

  return {
    async stop() {
      stopping = true;
      if (restart) clearTimeout(restart);
      const proc = child;
      if (!proc || proc.exitCode !== null) return;
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
