// What usage.ts reads of processes from /proc. The CPU time of a unit's group where the host keeps none
// for it (cgroup v1 with cpuacct apart, which units are not put in): the group's processes. And the
// fallback for a unit whose processes have no cgroup of their own (a host that cannot confine them): its
// agent's process tree. CPU is each process's own time plus what its reaped children used (cutime,
// cstime), so a child that exits does not take its CPU time away; memory is the tree's resident set.
import { readFileSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { readAgentPid } from './agent-process.js';

/** USER_HZ and the page size of Linux on the platforms this runs on (x86-64, arm64 with 4 KiB pages). */
const TICK_NS = 1e9 / 100;
const PAGE = 4096;

interface Proc {
  ppid: number;
  cpuTicks: number;
  rssPages: number;
}

/** utime, stime, cutime and cstime of a /proc/<pid>/stat, in ticks. */
function cpuTicksOf(stat: string): number {
  // Fields after the command name (which may hold spaces and parentheses): state is field 3.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 15);
  return Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
}

/**
 * CPU time of the processes listed in a group's cgroup.procs; null when it cannot be read or is empty
 * (the unit's processes are not in it). A process that ends between the two reads is left out: its time
 * is its reaper's cutime once reaped. When the group's top process itself ends (the unit restarted), the
 * sum starts again lower, and the sampler takes a counter that went back as a gap.
 * Synchronous reads: procfs and cgroupfs are kernel memory (usage.ts).
 */
export function groupCpuNanoseconds(procsFile: string): number | null {
  let pids: string[];
  try {
    pids = readFileSync(procsFile, 'utf8').split('\n');
  } catch {
    return null;
  }
  let ticks = 0;
  let seen = 0;
  for (const pid of pids) {
    if (pid === '') continue;
    try {
      ticks += cpuTicksOf(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      seen++;
    } catch {
      // ended meanwhile
    }
  }
  return seen === 0 || !Number.isFinite(ticks) ? null : ticks * TICK_NS;
}

/** One read of the process table serves every unit sampled in the same second. */
let table: { at: number; procs: Promise<Map<number, Proc>> } | null = null;

async function readTable(): Promise<Map<number, Proc>> {
  const procs = new Map<number, Proc>();
  const pids = (await readdir('/proc')).filter((d) => /^\d+$/.test(d));
  await Promise.all(
    pids.map(async (pid) => {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
      if (!stat) return;
      const f = stat
        .slice(stat.lastIndexOf(')') + 2)
        .split(' ')
        .map(Number);
      procs.set(Number(pid), { ppid: f[1]!, cpuTicks: cpuTicksOf(stat), rssPages: f[21]! });
    }),
  );
  return procs;
}

function processTable(): Promise<Map<number, Proc>> {
  if (!table || Date.now() - table.at > 1000) table = { at: Date.now(), procs: readTable() };
  return table.procs;
}

/** CPU time and resident memory of the unit's agent and everything under it; null when it runs none. */
export async function processTreeUsage(
  unitDir: string,
): Promise<{ cpuNanoseconds: number; memoryBytes: number } | null> {
  const root = await readAgentPid(unitDir).catch(() => null);
  if (root === null) return null;
  const procs = await processTable();
  if (!procs.has(root)) return null;
  const children = new Map<number, number[]>();
  for (const [pid, p] of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), pid]);
  let ticks = 0;
  let pages = 0;
  for (const queue = [root]; queue.length > 0;) {
    const pid = queue.pop()!;
    const p = procs.get(pid);
    if (!p) continue;
    ticks += p.cpuTicks;
    pages += p.rssPages;
    queue.push(...(children.get(pid) ?? []));
  }
  return { cpuNanoseconds: ticks * TICK_NS, memoryBytes: pages * PAGE };
}
