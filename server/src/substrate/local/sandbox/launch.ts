// Starts one program of a local unit confined (DECISIONS.md §8 "Confinement"), with bubblewrap:
//   - a user namespace mapping 0-65535 inside to the volume's own host range (idmap.ts): bwrap runs as the
//     range's first id, blocks until this process, root on the host, has written the maps (root may map a
//     whole range; bwrap alone could map one id, and as root that id would be the host's root), so the
//     program's root is an unprivileged id of this host;
//   - a mount namespace whose `/` is the unit's root directory (staged by the launcher, below), with this host's userland at
//     /usr (read-only, the image of the local substrate's units), fresh /proc, /dev and /tmp, and the
//     platform's runtime files read-only under /.svc (never taken from the volume);
//   - a PID namespace (bwrap's reaper is its pid 1), IPC and UTS namespaces of its own;
//   - the unit's network namespace (network.ts), entered by nsenter before bwrap starts, or none but its
//     own loopback.
// Seen from the host, the process tree is the launcher (unshare, sh, nsenter and setpriv, each exec'ing the
// next, end as bwrap), bwrap's reaper inside,
// and the program. When the launcher's parent (the agent or the gateway) dies, everything inside dies
// with it (--die-with-parent, then the PID namespace's end).
import { spawn, type ChildProcess, type IOType } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import type { IdRange } from './idmap.js';
import { unitNetnsPath } from './names.js';
import { joinUnitLimits } from './limits.js';
import { RUNTIME_DIR, runtimeSources } from './runtime.js';

export const BWRAP = '/usr/bin/bwrap';
const INFO_TIMEOUT_MS = 10_000;
export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface SandboxOptions {
  unitId: string;
  /** The host directory that is `/` inside. */
  root: string;
  range: IdRange;
  /** Join the unit's network namespace (else none but loopback). */
  network: boolean;
  /** The program and its arguments, as paths inside. */
  command: string[];
  env: Record<string, string>;
  /** The working directory inside (default `/`). */
  cwd?: string;
  /** Keep root's capabilities inside its own namespaces (a VPS's init); else none. */
  capabilities?: boolean;
  hostname?: string;
  /** The unit's cgroups (limits.ts): the sandbox is in them before its program runs. */
  cgroups?: string[];
  /**
   * Whether the host's /etc/alternatives and /etc/ssl are there, read-only (a workload's root has no /etc
   * of its own: Debian's program names such as awk or Xvnc are links through alternatives). A machine has
   * its own /etc.
   */
  hostEtc?: boolean;
  /** Fresh, empty directories inside (a machine's /run). */
  tmpfs?: string[];
  /** Descriptors 0-2 of the program (node's spawn stdio). */
  stdio: [IOType, IOType, IOType];
}

export interface Sandboxed {
  child: ChildProcess;
  /** The host pid of bwrap's reaper, pid 1 inside: the program is its child. Rejects if setup failed. */
  init: Promise<number>;
}

/**
 * Where the launcher, in a mount namespace of its own, mounts what bwrap binds: the unit's root and the
 * runtime's parts. bwrap looks its sources up by path as the unit's id, which may not pass through
 * DATA_DIR or the checkout (0700 directories, rightly); mounted here, they are reached through a tmpfs
 * of mode 0755 seen by that namespace alone.
 */
const STAGE = '/run/svc-units/stage';

/** The launcher: stage the sources, enter the unit's network, become the unit's id, exec bwrap. */
const STAGE_SCRIPT = `set -e
stage=$1; n=$2; shift 2
mount -t tmpfs -o mode=0755,size=64k svc-stage "$stage"
i=0
while [ "$i" -lt "$n" ]; do
  src=$1; shift
  # The unit's root is never a link a customer left (a machine's rootfs/ is on its volume).
  if [ "$i" -eq 0 ] && { [ -L "$src" ] || [ ! -d "$src" ]; }; then echo "unit root is not a directory" >&2; exit 125; fi
  if [ -d "$src" ]; then mkdir "$stage/$i"; mount --bind "$src" "$stage/$i"
  elif [ -e "$src" ]; then : > "$stage/$i"; mount --bind "$src" "$stage/$i"
  else mkdir "$stage/$i"; fi
  i=$((i + 1))
done
exec "$@"
`;

function bwrapArgs(options: SandboxOptions, runtime: readonly { inside: string }[]): string[] {
  // prettier-ignore
  return [
    '--unshare-user', '--uid', '0', '--gid', '0',
    '--info-fd', '3', '--userns-block-fd', '4',
    '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try',
    ...(options.network ? [] : ['--unshare-net']),
    '--bind', `${STAGE}/0`, '/',
    '--ro-bind', '/usr', '/usr',
    // Binds, not symlinks: bubblewrap 0.8 refuses to make a symlink where an earlier run left one.
    '--ro-bind', '/usr/bin', '/bin',
    '--ro-bind', '/usr/sbin', '/sbin',
    '--ro-bind', '/usr/lib', '/lib',
    '--ro-bind-try', '/usr/lib64', '/lib64',
    '--proc', '/proc',
    '--dev', '/dev',
    '--tmpfs', '/tmp',
    ...(options.hostEtc ? ['--ro-bind-try', '/etc/alternatives', '/etc/alternatives', '--ro-bind-try', '/etc/ssl', '/etc/ssl'] : []),
    '--tmpfs', RUNTIME_DIR,
    ...runtime.flatMap((part, i) => ['--ro-bind', `${STAGE}/${i + 1}`, part.inside]),
    '--remount-ro', RUNTIME_DIR,
    ...(options.tmpfs ?? []).flatMap((dir) => ['--tmpfs', dir]),
    ...(options.capabilities ? ['--cap-add', 'ALL'] : ['--cap-drop', 'ALL']),
    '--die-with-parent',
    '--hostname', options.hostname ?? 'unit',
    '--chdir', options.cwd ?? '/',
    '--',
    ...options.command,
  ];
}

/** Starts `options.command` confined; the caller supervises `child` as it would the program itself. */
export function spawnSandboxed(options: SandboxOptions): Sandboxed {
  const id = String(options.range.base);
  mkdirSync(STAGE, { recursive: true, mode: 0o755 });
  const runtime = runtimeSources();
  const sources = [options.root, ...runtime.map((part) => part.host)];
  const network = options.network ? ['nsenter', `--net=${unitNetnsPath(options.unitId)}`, '--'] : [];
  // prettier-ignore
  const args = [
    '--mount', '--propagation', 'private', '--',
    '/bin/sh', '-c', STAGE_SCRIPT, 'sh', STAGE, String(sources.length), ...sources,
    ...network,
    'setpriv', `--reuid=${id}`, `--regid=${id}`, '--clear-groups', '--',
    BWRAP, ...bwrapArgs(options, runtime),
  ];
  // The program's environment passes through the launchers (never their command lines, which every
  // user of the host can read: it may hold a secret such as an RCON password), and nothing else does.
  const child = spawn('unshare', args, {
    stdio: [...options.stdio, 'pipe', 'pipe'],
    env: { PATH: SANDBOX_PATH, ...options.env },
  });
  child.on('error', () => undefined);
  const info = child.stdio[3] as Readable;
  const block = child.stdio[4] as Writable;
  block.on('error', () => undefined);
  info.on('error', () => undefined);
  const init = mapIds(child, info, block, options.range, options.cgroups ?? []);
  init.catch(() => child.kill('SIGKILL'));
  return { child, init };
}

/** Reads the reaper's pid from bwrap, writes its id maps, and lets it go on. */
function mapIds(
  child: ChildProcess,
  info: Readable,
  block: Writable,
  range: IdRange,
  cgroups: readonly string[],
): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => fail(new Error('bubblewrap did not start in time')), INFO_TIMEOUT_MS);
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.off('exit', early);
      info.removeAllListeners('data');
      reject(err);
    };
    const early = (code: number | null) =>
      fail(new Error(`bubblewrap exited with ${code} before its program ran`));
    child.once('exit', early);
    info.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const end = text.indexOf('}');
      if (end < 0) return;
      info.removeAllListeners('data');
      clearTimeout(timer);
      let pid: number;
      try {
        pid = (JSON.parse(text.slice(0, end + 1)) as { 'child-pid': number })['child-pid'];
      } catch {
        reject(new Error('bubblewrap said something unreadable'));
        return;
      }
      const map = `0 ${range.base} ${range.size}\n`;
      try {
        joinUnitLimits(cgroups, [child.pid!, pid]);
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      Promise.all([writeFile(`/proc/${pid}/uid_map`, map), writeFile(`/proc/${pid}/gid_map`, map)]).then(
        () => {
          child.off('exit', early);
          block.end('1');
          resolve(pid);
        },
        (err: unknown) => reject(err instanceof Error ? err : new Error(String(err))),
      );
    });
  });
}

/** The host pids of the processes inside (every descendant of the reaper), deepest last. */
export async function sandboxProcesses(init: number): Promise<number[]> {
  const found: number[] = [];
  const visit = async (pid: number) => {
    const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
    for (const child of text.trim().split(/\s+/).filter(Boolean).map(Number)) {
      found.push(child);
      await visit(child);
    }
  };
  await visit(init);
  return found;
}
