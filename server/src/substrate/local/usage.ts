// What a local unit uses (DECISIONS.md §8 "Usage metrics"), from what the kernel counts for it: CPU and
// memory from its cgroups (sandbox/limits.ts: v1 where its controllers are mounted, else v2),
// disk from its volume directory, network from the host side of its veth. Anything the host does not
// keep for the unit is null, never guessed: the sampler stores a gap.
import { existsSync, lstatSync, opendirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { UnitUsage } from '../driver.js';
import { unitVethName } from './sandbox/names.js';
import { groupCpuNanoseconds, processTreeUsage } from './usage-processes.js';
import { unitLimitDirs } from './sandbox/limits.js';

const V1_ROOT = '/sys/fs/cgroup';
/** The host's cgroup layout, which does not change while the platform runs. */
const V2 = existsSync(join(V1_ROOT, 'cgroup.controllers'));
/** cgroup v1 with cpuacct mounted with cpu (cpu,cpuacct): the unit's cpu group counts its CPU time. */
const V1_CPUACCT_WITH_CPU = !V2 && existsSync(join(V1_ROOT, 'cpu', 'cpuacct.usage'));

/**
 * The counters are files of cgroupfs and sysfs: kernel memory, never a disk, so they are read at once.
 * An asynchronous read is four trips through libuv's thread pool (open, stat, read, close), and the
 * sampler reads a handful per unit every 10 s: 2.4 % of a core for 100 units in the metrics bench.
 */
function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function readNumber(path: string): number | null {
  const text = readText(path);
  const n = text === null ? NaN : Number(text.trim());
  return Number.isFinite(n) ? n : null;
}

/** `key value` lines (cpu.stat, memory.stat, /proc/<pid>/status with its colons). */
function field(text: string | null, key: string): number | null {
  const line = text?.split('\n').find((l) => l.startsWith(`${key} `) || l.startsWith(`${key}:`));
  const n = line ? Number.parseInt(line.slice(key.length + 1).trim(), 10) : NaN;
  return Number.isFinite(n) ? n : null;
}

/**
 * CPU time of the unit's group: v2's cpu.stat; v1's cpuacct, co-mounted with cpu or beside it when the
 * unit is in it; else (cpuacct apart, which units are not put in) its group's processes' time.
 */
function cpuNanoseconds(unitId: string, dir: string | undefined): number | null {
  if (!dir) return null;
  if (V2) {
    const usec = field(readText(join(dir, 'cpu.stat')), 'usage_usec');
    return usec === null ? null : usec * 1000;
  }
  if (V1_CPUACCT_WITH_CPU) return readNumber(join(dir, 'cpuacct.usage'));
  // Checked first: a read that fails throws, and an error's stack costs more than the check.
  const cpuacct = join(V1_ROOT, 'cpuacct', 'svc-units', unitId, 'cpuacct.usage');
  return (existsSync(cpuacct) ? readNumber(cpuacct) : null) ?? groupCpuNanoseconds(join(dir, 'cgroup.procs'));
}

function memoryBytes(dir: string | undefined): number | null {
  if (!dir) return null;
  return readNumber(join(dir, V2 ? 'memory.current' : 'memory.usage_in_bytes'));
}

/** Walks are not free: a volume's size is taken again at most once a minute. */
const DISK_TTL_MS = 60_000;
/** A volume with more entries than this is not walked every minute: its size is unknown. */
const DISK_MAX_ENTRIES = 200_000;
const diskCache = new Map<string, { at: number; bytes: number | null }>();

/** Entries looked at between two turns of the event loop: a walk never holds it for long. */
const WALK_SLICE = 256;

/**
 * The blocks a directory tree holds. Synchronous lstat, in slices between which the loop runs: a
 * promise per entry cost about three times the CPU (100 volumes of 50 files: 90-150 ms against 35-60).
 */
async function walk(root: string, budget: { left: number }): Promise<number> {
  let bytes = 0;
  let slice = WALK_SLICE;
  for (const dirs = [root]; dirs.length > 0;) {
    const path = dirs.pop()!;
    const dir = opendirSync(path);
    try {
      for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
        if (--budget.left < 0) throw new Error('too many entries');
        const child = join(path, entry.name);
        let st;
        try {
          st = lstatSync(child, { throwIfNoEntry: false });
        } catch {
          // unreadable: left out, as one that went meanwhile
        }
        if (!st) continue;
        bytes += st.blocks * 512;
        if (entry.isDirectory()) dirs.push(child);
        if (--slice === 0) {
          slice = WALK_SLICE;
          await yieldToLoop();
        }
      }
    } finally {
      dir.closeSync();
    }
  }
  return bytes;
}

/** Volumes' sizes are taken again at their next measure (the metrics bench: a minute's first slot). */
export function forgetVolumeSizes(): void {
  diskCache.clear();
}

async function diskBytes(volumeDir: string | null): Promise<number | null> {
  if (!volumeDir) return null;
  const cached = diskCache.get(volumeDir);
  if (cached && Date.now() - cached.at < DISK_TTL_MS) return cached.bytes;
  const bytes = await walk(volumeDir, { left: DISK_MAX_ENTRIES }).catch(() => null);
  diskCache.set(volumeDir, { at: Date.now(), bytes });
  return bytes;
}

/**
 * The host side of the veth counts the other way round: what the host receives on it the unit sent.
 * No interface (a unit started before network namespaces, or a host without them): nulls.
 */
function network(unitId: string): Pick<UnitUsage, 'networkRxBytes' | 'networkTxBytes'> {
  const stats = join('/sys/class/net', unitVethName(unitId), 'statistics');
  return {
    networkRxBytes: readNumber(join(stats, 'tx_bytes')),
    networkTxBytes: readNumber(join(stats, 'rx_bytes')),
  };
}

/**
 * The unit's usage; `volumeDir` its volume's directory (null: no disk figure). What its groups do not
 * count (v1 keeps CPU time in cpuacct, which units are not put in; a host that cannot confine them) is
 * read from its agent's process tree (usage-processes.ts).
 */
export async function localUnitUsage(
  unitId: string,
  unitDir: string,
  volumeDir: string | null,
): Promise<UnitUsage> {
  const dirs = unitLimitDirs(unitId);
  const cpu = cpuNanoseconds(unitId, dirs.cpu);
  const memory = memoryBytes(dirs.memory);
  const net = network(unitId);
  const disk = await diskBytes(volumeDir);
  if (cpu === null || memory === null) {
    const tree = await processTreeUsage(unitDir);
    return {
      cpuNanoseconds: cpu ?? tree?.cpuNanoseconds ?? null,
      memoryBytes: memory ?? tree?.memoryBytes ?? null,
      diskBytes: disk,
      ...net,
    };
  }
  return { cpuNanoseconds: cpu, memoryBytes: memory, diskBytes: disk, ...net };
}
