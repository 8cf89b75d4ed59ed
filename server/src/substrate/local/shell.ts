// A shell in a unit of the local substrate (DECISIONS.md §6 "Shell"): confined with bubblewrap to the
// unit's own files, never the host's. Its root directory is the volume (a machine's: its rootfs/), with
// the image's programs read-only at /usr (the local substrate's units run on this machine's Debian
// userland, which is their image) and fresh /proc, /dev and /tmp; no other process visible. Its network:
// where the host can hold it to the unit's egress rules (unit-cgroup.ts), the host's, from inside the
// unit's cgroup, which the edge's rules match; elsewhere none but its own loopback, so an egress rule is
// never bypassed (the machine then reaches nothing, stricter than its rules). What it writes lands on the volume; so do the empty mount points bubblewrap makes
// at its top (usr, bin, sbin, lib, lib64, proc, dev, tmp), as a machine's root file system has them. Without bubblewrap there is no shell (the
// ticket route's 404 "offers no shell"): a chroot fallback would need root, and tests could not reach it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOTFS, type LocalLayout } from './layout.js';
import { inUnitCgroup } from './unit-cgroup.js';

/** A program to start on a PTY of this machine. */
export interface ShellCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
}

const BWRAP = '/usr/bin/bwrap';
/** What a unit's image offers, tried in order (the ticket's `shells`). */
const SHELLS = ['bash', 'sh'] as const;
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The shells the unit's image offers, in the order they are tried; none without bubblewrap. */
export function offeredShells(): string[] {
  if (!existsSync(BWRAP)) return [];
  return SHELLS.filter((name) => existsSync(join('/usr/bin', name)));
}

/** The confined command running the first offered shell of `shells` in the unit's files, or null. */
export function shellCommand(
  layout: LocalLayout,
  unit: { id: string; kind: 'machine' | 'workload'; volumeId: string },
  shells: readonly string[],
): ShellCommand | null {
  const offered = offeredShells();
  const shell = shells.find((name) => offered.includes(name));
  if (!shell) return null;
  const volume = layout.volumeDir(unit.volumeId);
  const root = unit.kind === 'machine' ? join(volume, ROOTFS) : volume;
  if (!existsSync(root)) return null;
  // A machine's shell is held to its egress rules; a workload's (which has no firewall) keeps no network.
  const confined =
    unit.kind === 'machine' ? inUnitCgroup(unit.id, BWRAP, bwrapArgs(root, shell, true)) : null;
  return {
    ...(confined ?? { file: BWRAP, args: bwrapArgs(root, shell, false) }),
    // The environment is set inside (--clearenv): nothing of the gateway's reaches the shell.
    env: { PATH },
  };
}

function bwrapArgs(root: string, shell: string, shareNet: boolean): string[] {
  // prettier-ignore
  return [
      '--bind', root, '/',
      '--ro-bind', '/usr', '/usr',
      // Binds, not symlinks: bubblewrap 0.8 refuses to make a symlink where the last shell left one.
      '--ro-bind', '/usr/bin', '/bin',
      '--ro-bind', '/usr/sbin', '/sbin',
      '--ro-bind', '/usr/lib', '/lib',
      '--ro-bind-try', '/usr/lib64', '/lib64',
      '--proc', '/proc',
      '--dev', '/dev',
      '--tmpfs', '/tmp',
      '--unshare-all',
      ...(shareNet ? ['--share-net'] : []),
      '--cap-drop', 'ALL',
      '--die-with-parent',
      '--hostname', 'unit',
      '--chdir', '/',
      '--clearenv',
      '--setenv', 'TERM', 'xterm-256color',
      '--setenv', 'HOME', '/',
      '--setenv', 'PATH', PATH,
      '--setenv', 'LANG', 'C.UTF-8',
      `/usr/bin/${shell}`,
  ];
}
