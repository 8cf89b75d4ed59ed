// `npm start` runs the local edge as a child process (EDGE=on): forwarded bytes never pass through the
// API process, and an edge that dies is started again (after a second) while the server runs.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import { CHILD_STDIO, WITH_PARENT_ARG } from '../process/parent-pipe.js';

const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const EDGE_MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const RESTART_MS = 1_000;
const STOP_GRACE_MS = 5_000;

export interface EdgeChild {
  stop(): Promise<void>;
}

/** Starts the edge with this process's environment, pointed at `databaseUrl`. */
export function startEdgeChild(databaseUrl: string, log: Pick<Logger, 'info' | 'warn'>): EdgeChild {
  let child: ChildProcess | null = null;
  let stopping = false;
  let restart: NodeJS.Timeout | null = null;

  const launch = () => {
    restart = null;
    if (stopping) return;
    // stdin a pipe the child watches: a parent killed with SIGKILL takes its edge with it.
    const proc = spawn(process.execPath, ['--import', TSX_LOADER, EDGE_MAIN, WITH_PARENT_ARG], {
      cwd: REPO_ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl },
      stdio: CHILD_STDIO,
    });
    child = proc;
    proc.once('exit', (code, signal) => {
      child = null;
      if (stopping) return;
      log.warn({ code, signal }, 'edge exited; starting it again');
      restart = setTimeout(launch, RESTART_MS);
    });
    proc.once('error', () => {
      // Reported by 'exit' (or never started: the restart timer is not armed, and the log says so).
      log.warn('edge could not be started');
    });
  };
  launch();

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
