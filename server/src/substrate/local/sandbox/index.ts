// A local unit's confinement as a whole (DECISIONS.md §8 "Confinement"): what the agent prepares before
// it starts any of the unit's programs, and how each of them is started. See launch.ts (namespaces),
// idmap.ts (the unit's host ids), network.ts (its network) and limits.ts (its cgroups).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOTFS } from '../layout.js';
import { findProgram, searchPath } from '../programs.js';
import { shiftOwnership, volumeIdRange, type IdRange } from './idmap.js';
import { BWRAP } from './launch.js';
import { ensureHostGuard, ensureUnitNetwork } from './network.js';
import { ensureUnitLimits } from './limits.js';
import { ensureMountPoints } from './mount-points.js';
import type { UnitLimits } from '../../driver.js';

export {
  spawnSandboxed,
  sandboxProcesses,
  SANDBOX_PATH,
  type Sandboxed,
  type SandboxOptions,
} from './launch.js';
export { removeUnitNetwork } from './network.js';
export { releaseVolumeIdRange, volumeIdRange, type IdRange } from './idmap.js';

// What the launcher runs (launch.ts) and the network needs (network.ts).
const NEEDED = ['ip', 'nsenter', 'unshare', 'setpriv', 'mount', 'iptables', 'iptables-restore'];

/** Why this host cannot confine units (null: it can): the platform then runs none. */
export function confinementProblem(): string | null {
  if (process.getuid?.() !== 0) return 'the local substrate confines units as root only';
  if (!existsSync(BWRAP)) return 'bubblewrap (/usr/bin/bwrap) is not installed';
  const missing = NEEDED.filter((p) => !findProgram(p, searchPath()));
  if (missing.length > 0) return `${missing.join(', ')} not installed`;
  return null;
}

export interface UnitConfinement {
  range: IdRange;
  /** The host directory that is the unit's `/`: a workload's volume, a machine's rootfs. */
  root: string;
  network: boolean;
  /** Its cgroups (limits.ts). */
  cgroups: string[];
}

/** The directory a unit's programs see as `/`. */
export function unitRoot(kind: 'machine' | 'workload', volumeDir: string): string {
  return kind === 'machine' ? join(volumeDir, ROOTFS) : volumeDir;
}

/**
 * Makes the unit ready to run confined: its id range (and its files given to it), the host's guard
 * rules, and its network namespace when it has an address. Idempotent: every agent start runs it.
 */
export async function prepareUnit(unit: {
  id: string;
  kind: 'machine' | 'workload';
  volumeDir: string;
  address: string | null;
  limits: UnitLimits | null;
}): Promise<UnitConfinement> {
  const range = await volumeIdRange(unit.volumeDir);
  await shiftOwnership(unit.volumeDir, range);
  if (unit.address) {
    await ensureHostGuard();
    await ensureUnitNetwork(unit.id, unit.address);
  }
  const root = unitRoot(unit.kind, unit.volumeDir);
  await ensureMountPoints(root, unit.kind, range);
  const cgroups = ensureUnitLimits(unit.id, unit.limits);
  return { range, root, network: unit.address !== null, cgroups };
}
