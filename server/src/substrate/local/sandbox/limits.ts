// A local unit's cgroups (DECISIONS.md §8 "Confinement"): its plan's CPUs (a CFS quota of that many CPUs'
// time per period), its memory (the OOM killer acts inside the unit, not on the host), and 4096 tasks (a
// fork bomb stops there). cgroup v1 where its controllers are mounted (these machines), else v2. The
// confined programs are moved in before bubblewrap lets them run (launch.ts), so nothing of the unit
// ever runs outside them.
import { existsSync, mkdirSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { UnitLimits } from '../../driver.js';

const ROOT = '/sys/fs/cgroup';
const PARENT = 'svc-units';
export const TASKS_MAX = 4096;
const PERIOD_US = 100_000;

type Controller = 'cpu' | 'memory' | 'pids';
const CONTROLLERS: Controller[] = ['cpu', 'memory', 'pids'];

function v1(controller: Controller): string | null {
  const dir = join(ROOT, controller);
  return existsSync(join(dir, 'tasks')) ? dir : null;
}

function isV2(): boolean {
  return existsSync(join(ROOT, 'cgroup.controllers'));
}

/** The unit's group directories (one per v1 controller, or the v2 one), made with the limits written. */
export function ensureUnitLimits(unitId: string, limits: UnitLimits | null): string[] {
  if (isV2()) {
    const parent = join(ROOT, PARENT);
    mkdirSync(parent, { recursive: true });
    tryWrite(join(ROOT, 'cgroup.subtree_control'), '+cpu +memory +pids');
    tryWrite(join(parent, 'cgroup.subtree_control'), '+cpu +memory +pids');
    const dir = join(parent, unitId);
    mkdirSync(dir, { recursive: true });
    if (limits) {
      tryWrite(join(dir, 'cpu.max'), `${limits.cpu * PERIOD_US} ${PERIOD_US}`);
      tryWrite(join(dir, 'memory.max'), String(limits.memoryMb * 1024 * 1024));
    }
    tryWrite(join(dir, 'pids.max'), String(TASKS_MAX));
    return [dir];
  }
  const dirs: string[] = [];
  for (const controller of CONTROLLERS) {
    const root = v1(controller);
    if (!root) continue;
    const dir = join(root, PARENT, unitId);
    mkdirSync(dir, { recursive: true });
    if (controller === 'cpu' && limits) {
      tryWrite(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
      tryWrite(join(dir, 'cpu.cfs_quota_us'), String(limits.cpu * PERIOD_US));
    }
    if (controller === 'memory' && limits)
      tryWrite(join(dir, 'memory.limit_in_bytes'), String(limits.memoryMb * 1024 * 1024));
    if (controller === 'pids') tryWrite(join(dir, 'pids.max'), String(TASKS_MAX));
    dirs.push(dir);
  }
  return dirs;
}

/** Moves processes into the unit's groups; throws when one cannot be (closed, not open). */
export function joinUnitLimits(dirs: readonly string[], pids: readonly number[]): void {
  for (const dir of dirs) for (const pid of pids) writeFileSync(join(dir, 'cgroup.procs'), String(pid));
}

/** The unit's group directories as they are now, for reading what it uses (usage sampling). */
export function unitLimitDirs(unitId: string): Partial<Record<Controller, string>> {
  if (isV2()) return Object.fromEntries(CONTROLLERS.map((c) => [c, join(ROOT, PARENT, unitId)]));
  const found: Partial<Record<Controller, string>> = {};
  for (const c of CONTROLLERS) {
    const root = v1(c);
    if (root) found[c] = join(root, PARENT, unitId);
  }
  return found;
}

/** Removes the unit's groups; one still holding a process stays (it is killed with its unit). */
export function removeUnitLimits(unitId: string): void {
  const dirs = isV2()
    ? [join(ROOT, PARENT, unitId)]
    : CONTROLLERS.map(v1)
        .filter((d) => d !== null)
        .map((d) => join(d, PARENT, unitId));
  for (const dir of dirs) {
    try {
      for (const child of readdirSync(dir, { withFileTypes: true }))
        if (child.isDirectory()) rmdirSync(join(dir, child.name));
      rmdirSync(dir);
    } catch {
      // absent, or busy
    }
  }
}

function tryWrite(file: string, value: string): void {
  try {
    writeFileSync(file, value);
  } catch {
    // A controller this kernel lacks, or one the parent did not delegate: the others still hold.
  }
}
