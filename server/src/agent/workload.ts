// The workload's process, supervised: restarted with backoff when it exits, stopped with SIGTERM (then
// SIGKILL) when the agent stops. It stays in the agent's process group, so the driver's last-resort
// group kill reaches it; its pid is recorded so an agent that replaces a killed one can end an orphan.
import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { readIfPresent, writeJsonAtomic } from '../substrate/local/atomic-file.js';
import { processGroup, signal, signalGroup, waitUntil } from '../substrate/local/proc.js';
import type { ConsoleHub } from './console.js';
import type { AgentLog } from './log.js';

/** A run this long counts as healthy: the next exit starts the backoff over. */
const HEALTHY_MS = 30_000;
const STOP_GRACE_MS = 4_000;
const BACKOFF = { firstMs: 1_000, maxMs: 30_000 };

export interface WorkloadOptions {
  command: string[];
  cwd: string;
  /** Computed at each start, so a restart picks up the newest contract's endpoints. */
  env: () => NodeJS.ProcessEnv;
  /** Where the running process is recorded (workload.pid). */
  pidFile: string;
  log: AgentLog;
  /** The command console: stdin and stdout/stderr go through it (without one they are the agent's log). */
  console?: ConsoleHub;
  /** Restart delays: doubling from firstMs up to maxMs. */
  backoff?: { firstMs: number; maxMs: number };
  /** How the program is started (default: as a child of the agent); the local substrate confines it. */
  launch?: Launch;
}

/** A started program: its process, and (when it runs inside a launcher) the processes to signal. */
export interface Launched {
  child: ChildProcess;
  /** The program's own processes, signalled to stop it (a launcher passes no signal on). */
  inner?: () => Promise<number[]>;
}

export type Launch = (
  command: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; stdio: 'pipe' | 'inherit' },
) => Launched;

const directLaunch: Launch = (command, { cwd, env, stdio }) => ({
  child: spawn(command[0]!, command.slice(1), {
    cwd,
    env,
    stdio: stdio === 'pipe' ? ['pipe', 'pipe', 'pipe'] : ['ignore', 'inherit', 'inherit'],
  }),
});

export interface Workload {
  stop(): Promise<void>;
}

interface PidRecord {
  pid: number;
  group: number;
}

export function superviseWorkload(options: WorkloadOptions): Workload {
  const {
    command,
    cwd,
    env,
    pidFile,
    log,
    backoff = BACKOFF,
    console: hub,
    launch: start = directLaunch,
  } = options;
  let child: ChildProcess | null = null;
  let inner: Launched['inner'];
  let exited: Promise<void> = Promise.resolve();
  let restart: NodeJS.Timeout | null = null;
  let stopping = false;
  let failures = 0;
  // The pid file's last write, so stop() removes the file after it and not before.
  let recording: Promise<void> = Promise.resolve();

  function launch(): void {
    restart = null;
    if (stopping) return;
    const startedAt = Date.now();
    const launched = start(command, { cwd, env: env(), stdio: hub ? 'pipe' : 'inherit' });
    const proc = launched.child;
    child = proc;
    inner = launched.inner;
    if (hub) {
      // Output waits while a viewer is full, so a fast printer goes at the pace of its viewers.
      for (const out of [proc.stdout!, proc.stderr!]) {
        out.on('data', (chunk: Buffer) => {
          hub.output(chunk);
          if (hub.paused) out.pause();
        });
        out.on('error', () => undefined);
      }
      hub.attachInput(proc.stdin);
    }
    let done!: () => void;
    exited = new Promise((resolve) => (done = resolve));
    let ended = false;
    const end = (how: string) => {
      if (ended) return;
      ended = true;
      child = null;
      if (hub) hub.attachInput(null);
      done();
      if (stopping) return;
      if (Date.now() - startedAt >= HEALTHY_MS) failures = 0;
      const delay = Math.min(backoff.maxMs, backoff.firstMs * 2 ** failures);
      failures += 1;
      log.warn(`workload ${how}; restarting in ${delay} ms`);
      restart = setTimeout(launch, delay);
    };
    proc.once('error', (err: NodeJS.ErrnoException) => end(`could not start (${err.code ?? 'error'})`));
    proc.once('exit', (code, sig) => end(sig ? `was ended by ${sig}` : `exited with code ${code}`));
    if (proc.pid !== undefined) {
      log.info(`workload started (pid ${proc.pid})`);
      const record: PidRecord = { pid: proc.pid, group: process.pid };
      recording = writeJsonAtomic(pidFile, record).catch(() => log.warn('could not record the workload pid'));
    }
  }

  hub?.onResume(() => {
    child?.stdout?.resume();
    child?.stderr?.resume();
  });
  launch();
  return {
    async stop() {
      stopping = true;
      if (restart) clearTimeout(restart);
      const proc = child;
      if (proc?.pid !== undefined) {
        let gone = false;
        void exited.then(() => (gone = true));
        const targets = (await inner?.().catch(() => [])) ?? [];
        for (const pid of targets.length > 0 ? targets : [proc.pid]) signal(pid, 'SIGTERM');
        if (!(await waitUntil(() => gone, STOP_GRACE_MS))) {
          log.warn('workload ignored SIGTERM; killing it');
          signal(proc.pid, 'SIGKILL');
          await exited;
        }
      }
      await recording;
      await rm(pidFile, { force: true });
    },
  };
}

/**
 * Ends the workload a previous agent left running (that agent was killed, so it could not stop it): the
 * pid must still be in the dead agent's process group, or it is someone else's by now.
 */
export async function endOrphan(pidFile: string, log: AgentLog): Promise<void> {
  const text = await readIfPresent(pidFile);
  if (text === null) return;
  let record: PidRecord;
  try {
    record = JSON.parse(text) as PidRecord;
  } catch {
    return;
  }
  if (!Number.isInteger(record.pid) || !(record.group > 1) || record.group === process.pid) return;
  if ((await processGroup(record.pid)) === record.group) {
    log.warn(`ending the workload (pid ${record.pid}) left by a previous agent`);
    signalGroup(record.group, 'SIGKILL');
    await waitUntil(async () => (await processGroup(record.pid)) !== record.group, 2_000);
  }
  await rm(pidFile, { force: true });
}
