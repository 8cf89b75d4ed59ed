// The drivers the behaviour suite runs over, each with a probe: how a test looks inside that driver's
// volumes and units and at its processes, the way an operator on the node could.
import { readdir, readFile, readlink, mkdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { SubstrateDriver } from '../../server/src/substrate/driver.js';
import { createLocalDriver } from '../../server/src/substrate/local/driver.js';
import { signal } from '../../server/src/substrate/local/proc.js';
import { inject } from 'vitest';
import { lxdSubject } from './lxd-probe.js';

const lxdUrl = inject('lxdUrl');

export interface Probe {
  /** Writes a file on the volume, as a process of the machine could. */
  writeVolumeFile(volumeId: string, path: string, content: string): Promise<void>;
  /** A file's text on the volume, or null. */
  readVolumeFile(volumeId: string, path: string): Promise<string | null>;
  /** The volume's top-level entries, or null when the volume does not exist. */
  volumeEntries(volumeId: string): Promise<string[] | null>;
  /** The contract the unit's agent applied (what it was told, unknown fields dropped), or null. */
  appliedContract(unitId: string): Promise<Record<string, unknown> | null>;
  /** The pid of the unit's agent as recorded, or null. */
  agentPid(unitId: string): Promise<number | null>;
  /** Every live process the driver's units consist of (agents and workloads). */
  processes(): Promise<number[]>;
  /** Kills one of those processes with SIGKILL. */
  kill9(pid: number): Promise<void>;
  /**
   * Whether the substrate itself starts a unit's agent again when it dies (an LXD instance's PID 1
   * does); the local substrate leaves the unit stopped until the platform starts it.
   */
  supervisesAgents: boolean;
  /** Removes what the test left in a substrate that outlives DATA_DIR (LXD instances and volumes). */
  cleanup(): Promise<void>;
}

export interface Subject {
  name: string;
  make(dataDir: string): SubstrateDriver;
  probe(dataDir: string): Probe;
}

export const drivers: Subject[] = [
  {
    name: 'local',
    make: (dataDir) => createLocalDriver({ dataDir }),
    probe: (dataDir) => localProbe(dataDir),
  },
  // A real LXD cluster of two members on loopback, started by the global setup where LXD is installed.
  ...(lxdUrl ? [lxdSubject(lxdUrl)] : []),
];

function localProbe(dataDir: string): Probe {
  const volume = (id: string, path = '') => join(dataDir, 'volumes', id, path);
  return {
    async writeVolumeFile(volumeId, path, content) {
      await mkdir(dirname(volume(volumeId, path)), { recursive: true });
      await writeFile(volume(volumeId, path), content);
    },
    readVolumeFile: (volumeId, path) => orNull(readFile(volume(volumeId, path), 'utf8')),
    volumeEntries: (volumeId) => orNull(readdir(volume(volumeId))),
    async appliedContract(unitId) {
      const text = await orNull(readFile(join(dataDir, 'units', unitId, 'applied', 'contract.json'), 'utf8'));
      return text === null ? null : (JSON.parse(text) as Record<string, unknown>);
    },
    async agentPid(unitId) {
      const text = await orNull(readFile(join(dataDir, 'units', unitId, 'agent.pid'), 'utf8'));
      return text === null ? null : Number(text.trim());
    },
    processes: () => localProcesses(dataDir),
    kill9: async (pid) => kill9(pid),
    supervisesAgents: false,
    cleanup: async () => undefined,
  };
}

/**
 * Live processes whose arguments name something under `dir`, or whose working directory is there. A
 * child one of them is spawning shows its parent's command line from its fork until its exec: such a
 * child is not counted (a second agent or workload would have a command line of its own, or another
 * parent).
 */
export async function processesUnder(dir: string): Promise<number[]> {
  const found = new Map<number, { ppid: number; args: string }>();
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const args = (await orNull(readFile(`/proc/${pid}/cmdline`, 'utf8'))) ?? '';
    const cwd = (await orNull(readlink(`/proc/${pid}/cwd`))) ?? '';
    const stat = (await orNull(readFile(`/proc/${pid}/stat`, 'utf8'))) ?? '';
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    // An empty cmdline is a zombie (or a kernel thread): not running anything.
    if (args !== '' && (args.includes(dir) || cwd.startsWith(dir))) found.set(pid, { ppid, args });
  }
  return [...found].filter(([, { ppid, args }]) => found.get(ppid)?.args !== args).map(([pid]) => pid);
}

/**
 * The local driver's units as the contract suite counts them: the agents (host pids), and each unit's
 * confined program by its pid inside the unit, as LXD's probe lists an instance's: the descendants of
 * the reaper its sandbox.json names (the launcher and the reaper are the confinement; a machine's screen
 * is a sandbox of its own, as it is a process of LXD's host, not the instance).
 */
async function localProcesses(dataDir: string): Promise<number[]> {
  const found = await processesUnder(dataDir);
  for (const unitId of (await orNull(readdir(join(dataDir, 'units')))) ?? []) {
    const record = await orNull(readFile(join(dataDir, 'units', unitId, 'sandbox.json'), 'utf8'));
    const init = record === null ? NaN : Number((JSON.parse(record) as { init: number }).init);
    if (!Number.isInteger(init)) continue;
    const visit = async (pid: number): Promise<void> => {
      const children = (await orNull(readFile(`/proc/${pid}/task/${pid}/children`, 'utf8'))) ?? '';
      for (const child of children.trim().split(/\s+/).filter(Boolean).map(Number)) {
        const status = (await orNull(readFile(`/proc/${child}/status`, 'utf8'))) ?? '';
        if (/^State:\s+Z/m.test(status)) continue;
        const inner = Number(/^NSpid:.*\s(\d+)$/m.exec(status)?.[1]);
        if (inner > 1) found.push(inner);
        await visit(child);
      }
    };
    await visit(init);
  }
  return found;
}

/**
 * Live processes running as one of the host ids of a confined unit's volume (its root directory's owner
 * is the first of them: substrate/local/sandbox/idmap.ts), read from the host's /proc.
 */
export async function processesOfVolume(
  volumeDir: string,
): Promise<{ pid: number; uid: number; comm: string }[]> {
  const base = (await stat(volumeDir)).uid;
  // A volume no unit has started is still root's: it has no range, so no process is its.
  if (base < 2 ** 20) return [];
  const found: { pid: number; uid: number; comm: string }[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const status = await orNull(readFile(`/proc/${name}/status`, 'utf8'));
    const uid = Number(/^Uid:\s+(\d+)/m.exec(status ?? '')?.[1]);
    const comm = /^Name:\s+(.*)$/m.exec(status ?? '')?.[1] ?? '';
    if (/^State:\s+Z/m.test(status ?? '')) continue;
    if (uid >= base && uid < base + 65_536) found.push({ pid: Number(name), uid, comm });
  }
  return found;
}

export function kill9(pid: number): void {
  signal(pid, 'SIGKILL');
}

export async function orNull<T>(promise: Promise<T>): Promise<T | null> {
  try {
    return await promise;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ESRCH' || code === 'EACCES' || code === 'ENOTDIR') return null;
    throw err;
  }
}

/** Polls until `check` answers something other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
