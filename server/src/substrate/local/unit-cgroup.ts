// Where a local unit's processes are put so the edge can tell their connections apart (edge/egress.ts):
// one cgroup v2 group per unit, svc-units/<unitId>, matched by the kernel's xt_cgroup (`iptables -m cgroup
// --path`). A group and not a uid, because the unit's files are the driver's and a shell running under
// another uid could not write them; and not a network namespace, because a unit listens on a 127.x
// address, which the kernel never routes out of a namespace's own loopback (README "Firewall").
//
// Confinement needs root (to make groups and move processes), a cgroup v2 hierarchy (the unified one
// beside v1 controllers works too) and iptables; without them a machine's shell keeps no network but its
// own loopback (shell.ts), so no rule is ever bypassed, and the listing says egress is not enforced.
import { existsSync, mkdirSync, rmdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { findProgram } from './programs.js';

export const UNIT_CGROUP_PARENT = 'svc-units';
const CGROUP_MOUNTS = ['/sys/fs/cgroup', '/sys/fs/cgroup/unified'];

/** The cgroup v2 mount, or null on a host without one. */
export function cgroupRoot(): string | null {
  return CGROUP_MOUNTS.find((dir) => existsSync(join(dir, 'cgroup.controllers'))) ?? null;
}

/** The unit's group, relative to the cgroup v2 root (what `-m cgroup --path` names). */
export function unitCgroupPath(unitId: string): string {
  return `${UNIT_CGROUP_PARENT}/${unitId}`;
}

let capable: boolean | undefined;
/** Whether this host can confine units for egress: root, cgroup v2, iptables and ip6tables. */
export function egressConfinable(): boolean {
  capable ??=
    process.getuid?.() === 0 &&
    cgroupRoot() !== null &&
    ['iptables', 'ip6tables', 'iptables-restore', 'ip6tables-restore'].every((p) =>
      findProgram(p, searchPath()),
    );
  return capable;
}

/** PATH plus the sbin directories, where Debian puts iptables (a root shell has them; a service may not). */
export function searchPath(): string {
  return [process.env.PATH ?? '', '/usr/sbin', '/sbin'].join(':');
}

/** Makes the unit's group (idempotent); answers its directory and its inode (the kernel's cgroup id). */
export function ensureUnitCgroup(unitId: string): { dir: string; id: number } {
  const root = cgroupRoot();
  if (!root) throw new Error('no cgroup v2 hierarchy');
  const dir = join(root, unitCgroupPath(unitId));
  mkdirSync(dir, { recursive: true });
  return { dir, id: statSync(dir).ino };
}

/**
 * `file args` run inside the unit's group: a shell moves itself there and then becomes the program, so
 * nothing of it runs outside for a moment. A group that cannot be entered fails the start (closed, not
 * open); null when the host cannot confine (the caller keeps its stricter default).
 */
export function inUnitCgroup(
  unitId: string,
  file: string,
  args: readonly string[],
): { file: string; args: string[] } | null {
  if (!egressConfinable()) return null;
  const { dir } = ensureUnitCgroup(unitId);
  return {
    file: '/bin/sh',
    args: ['-c', 'echo $$ > "$1" && shift && exec "$@"', 'sh', join(dir, 'cgroup.procs'), file, ...args],
  };
}

/**
 * Removes the group of a unit that is gone for good (a unit id is never used again, so no rule can be
 * left bound to a group that a later unit re-made). One that still holds processes, or is absent, stays
 * as it is.
 */
export function removeUnitCgroup(unitId: string): void {
  const root = cgroupRoot();
  if (!root || !egressConfinable()) return;
  try {
    rmdirSync(join(root, unitCgroupPath(unitId)));
  } catch {
    // EBUSY (a process outlived its agent) or ENOENT: nothing to do.
  }
}
