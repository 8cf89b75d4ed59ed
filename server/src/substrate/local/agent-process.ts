// The unit agent as a process of this machine. It is spawned detached, in a session and process group of
// its own, so a control plane killed with -9 (or a Ctrl-C on its terminal) does not take its customers'
// units with it, as a real node would not; the workload's launcher stays in its group, so one group
// signal ends both. The agent itself runs unconfined, as the host's root: it confines every program of
// its unit (sandbox/) and supervises them from outside.
import { spawn } from 'node:child_process';
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { programArgs } from '../../process/program-bundle.js';
import { UNIT_FILES } from './layout.js';
import { runsWithArg, signal, signalGroup, waitUntil } from './proc.js';

// Resolved from this file, so the agent starts the same whatever the control plane's working directory.
const AGENT_MAIN = fileURLToPath(new URL('../../agent/main.ts', import.meta.url));
// The repository root: tsx (the fallback of program-bundle.ts) reads tsconfig.json from its working directory.
const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

const STOP_GRACE_MS = 5_000;
/** Nice 10: a weight of 110 against the control plane's 1024. */
const AGENT_SESSION_NICE = 10;
const LOG_ROTATE_BYTES = 5 * 1024 * 1024;

/** Whether `pid` is the agent of the unit in `unitDir` (and not a process that reused its pid). */
export function isAgentOf(pid: number, unitDir: string): Promise<boolean> {
  return runsWithArg(pid, unitDir);
}

export async function readAgentPid(unitDir: string): Promise<number | null> {
  try {
    const pid = Number((await readFile(join(unitDir, UNIT_FILES.agentPid), 'utf8')).trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Starts the agent of `unitDir`, its output appended to agent.log; answers its pid. */
export async function spawnAgent(unitDir: string): Promise<number> {
  const logFile = join(unitDir, UNIT_FILES.agentLog);
  await rotateLog(logFile);
  const out = openSync(logFile, 'a', 0o600);
  try {
    // From its bundle (program-bundle.ts): a third of the CPU of a start through tsx's loader.
    const args = [...(await programArgs(AGENT_MAIN)), unitDir];
    const child = spawn(process.execPath, args, {
      cwd: REPO_ROOT,
      detached: true,
      stdio: ['ignore', out, out],
      // Not the control plane's environment: it holds the database URL and the encryption key.
      env: agentEnv(),
    });
    child.on('error', () => {
      // Reported below through the missing pid; the listener keeps the event from throwing.
    });
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start the agent of ${unitDir}`);
    yieldToControlPlane(child.pid);
    return child.pid;
  } finally {
    closeSync(out);
  }
}

/**
 * The agent's session below the control plane's CPU weight. The agent runs in a session of its own
 * (detached), and where the kernel weighs the scheduler by session (autogroup, on by default) that one
 * session weighed as much as the whole control plane: an agent starting (a third of a second of CPU)
 * during a reinstall held the API's answers back by 50-300 ms on two cores. Its session now weighs a
 * tenth. Only the session's weight: a nice value of the agent itself would pass to its unit's programs,
 * which then lose their plan's CPU to other units under contention (their CPU group's weight is computed
 * from their own). Without autogroup every task weighs alike, and the agent is one task of many.
 */
function yieldToControlPlane(pid: number): void {
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(AGENT_SESSION_NICE));
  } catch {
    // A kernel without autogroup.
  }
}

/**
 * Stops the agent (it stops its workload first): SIGTERM, then SIGKILL to its whole process group when it
 * has not exited within the grace period. Answers false when it had to kill.
 */
export async function stopAgent(pid: number, unitDir: string): Promise<boolean> {
  if (!(await isAgentOf(pid, unitDir))) return true;
  signal(pid, 'SIGTERM');
  const gone = () => isAgentOf(pid, unitDir).then((alive) => !alive);
  const clean = await waitUntil(gone, STOP_GRACE_MS);
  // Also after a clean exit: whatever the workload left in the group (its own children) goes too.
  signalGroup(pid, 'SIGKILL');
  if (!clean) await waitUntil(gone, 2_000);
  return clean;
}

function agentEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'TMPDIR', 'LANG', 'TZ']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

async function rotateLog(file: string): Promise<void> {
  try {
    if ((await stat(file)).size > LOG_ROTATE_BYTES) await rename(file, `${file}.1`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
