// A shell in a unit of the local substrate (DECISIONS.md §6 "Shell", §8 "Confinement"): it joins the
// confinement of the unit's running program (sandbox/, as `lxc exec` or `docker exec` would), so it
// runs as the unit's root (an unprivileged id of this host), sees the unit's files as `/` with the image's
// programs read-only at /usr, shares the unit's network namespace (its address, and its egress rules,
// which the host holds on the unit's veth) and its cgroups; it gets a PID namespace of its own, so no
// other process is visible, and when the gateway ends the session (its socket closed) the launcher dies
// and takes every process of the shell with it (unshare --kill-child: the shell is pid 1 of that
// namespace). A workload's shell keeps no capabilities; a machine's root keeps root's, inside its own
// namespaces, as on a VPS. A unit whose program is not running offers no shell (the ticket route's 404).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SandboxRecord } from '../../agent/confined.js';
import { UNIT_FILES, type LocalLayout } from './layout.js';
import { BWRAP, SANDBOX_PATH } from './sandbox/launch.js';
import { unitLimitDirs } from './sandbox/limits.js';

/** A program to start on a PTY of this machine. */
export interface ShellCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
}

/** What a unit's image offers, tried in order (the ticket's `shells`). */
const SHELLS = ['bash', 'sh'] as const;

/** The shells the unit's image offers, in the order they are tried; none where units are not confined. */
export function offeredShells(): string[] {
  if (!existsSync(BWRAP)) return [];
  return SHELLS.filter((name) => existsSync(join('/usr/bin', name)));
}

/** The running program's reaper, when it is still the unit's (a pid is reused once its process is gone). */
async function unitReaper(unitDir: string): Promise<number | null> {
  let record: SandboxRecord;
  try {
    record = JSON.parse(await readFile(join(unitDir, UNIT_FILES.sandbox), 'utf8')) as SandboxRecord;
  } catch {
    return null;
  }
  if (!Number.isInteger(record.init) || record.init <= 1) return null;
  const map = await readFile(`/proc/${record.init}/uid_map`, 'utf8').catch(() => '');
  const [inside, outside] = map.trim().split(/\s+/).map(Number);
  return inside === 0 && outside === record.base ? record.init : null;
}

/** How long a shell waits for a unit whose agent runs but whose programs have not started yet. */
const START_GRACE_MS = 10_000;

/**
 * The unit's reaper, waited for while its agent starts the programs: an agent acknowledges its unit
 * (and the operation succeeds) before it launches them, later still on a busy machine where agents
 * yield to the control plane; a shell asked for then answered 503 (CI saw it).
 */
async function startedReaper(unitDir: string): Promise<number | null> {
  const deadline = Date.now() + START_GRACE_MS;
  for (;;) {
    const reaper = await unitReaper(unitDir);
    if (reaper !== null || Date.now() >= deadline) return reaper;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The confined command running the first offered shell of `shells` in the unit, or null. */
export async function shellCommand(
  layout: LocalLayout,
  unit: { id: string; kind: 'machine' | 'workload' },
  shells: readonly string[],
): Promise<ShellCommand | null> {
  const offered = offeredShells();
  const shell = shells.find((name) => offered.includes(name));
  if (!shell) return null;
  const reaper = await startedReaper(layout.unitDir(unit.id));
  if (reaper === null) return null;
  const cgroups = Object.values(unitLimitDirs(unit.id)).filter((dir) => existsSync(dir));
  const dropCaps =
    unit.kind === 'machine'
      ? []
      : ['setpriv', '--inh-caps=-all', '--ambient-caps=-all', '--bounding-set=-all', '--'];
  // prettier-ignore
  const args = [
    '-c',
    // Into the unit's cgroups first, so nothing of the shell runs outside them for a moment.
    'for group in $SVC_CGROUPS; do echo $$ > "$group/cgroup.procs" || exit 126; done; unset SVC_CGROUPS; exec "$@"',
    'sh',
    'nsenter', '-t', String(reaper), '--user', '--mount', '--net', '--ipc', '--uts', '--root', '--wd', '--',
    'unshare', '--pid', '--fork', '--kill-child', '--mount-proc', '--',
    ...dropCaps,
    `/usr/bin/${shell}`, '-l',
  ];
  return {
    file: '/bin/sh',
    args,
    // What the shell starts with; nothing of the gateway's environment reaches it.
    env: {
      PATH: SANDBOX_PATH,
      TERM: 'xterm-256color',
      HOME: unit.kind === 'machine' ? '/root' : '/',
      LANG: 'C.UTF-8',
      SVC_CGROUPS: cgroups.join(' '),
    },
  };
}
