// A shell in a unit of the LXD substrate: an interactive exec (LXD's PTY inside the instance, its size
// and window changes through the control stream). It sees what the local substrate's shell sees
// (local/shell.ts, issue 34): the unit's root, its volume (a machine's root file system on it), as `/`,
// with the image's programs read-only at /bin, /usr and the rest, and the instance's /proc, /dev and /tmp,
// in a mount namespace of its own that ends with it; so a file the files API wrote at `/` is at `/` here.
import type { ShellSession, TerminalSize } from '../driver.js';
import type { LxdClient } from './client.js';
import { startExec } from './exec-session.js';

/** What the unit image offers (image.ts: busybox), tried in order (the ticket's `shells`). */
export const LXD_SHELLS = ['sh'] as const;
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** How long a shell has to go after SIGHUP before it is killed. */
const HANGUP_GRACE_MS = 2_000;
const DRAIN_MS = 1_000;

/** What the image has that the shell's root gets, read-only; then what the instance shares with it. */
const IMAGE_DIRS = ['bin', 'sbin', 'usr', 'lib', 'lib64'];
const SHARED_DIRS = ['proc', 'dev', 'tmp'];

// Run by the image's busybox: the mount points are made in the root as the local substrate makes them
// (local/sandbox/mount-points.ts), owned by the instance's root; a link or a file where one goes is the
// unit's own doing and refuses the shell, as bubblewrap does there, rather than mounting through it.
const ROOTED = `root=$1; shell=$2
if [ -L "$root" ] || [ ! -d "$root" ]; then
  echo "svc: the unit's root $root is not a directory" >&2; exit 125
fi
for point in ${[...IMAGE_DIRS, ...SHARED_DIRS].join(' ')}; do
  [ -d "/$point" ] || continue
  if [ -L "$root/$point" ] || { [ -e "$root/$point" ] && [ ! -d "$root/$point" ]; }; then
    echo "svc: /$point in the unit's root is not a directory" >&2; exit 125
  fi
  [ -d "$root/$point" ] || mkdir -m 0755 "$root/$point" || exit 125
done
exec unshare -m sh -c '
  root=$1; shell=$2
  for point in ${IMAGE_DIRS.join(' ')}; do
    [ -d "/$point" ] || continue
    mount --rbind "/$point" "$root/$point" && mount -o remount,bind,ro "$root/$point" || exit 125
  done
  for point in ${SHARED_DIRS.join(' ')}; do mount --rbind "/$point" "$root/$point" || exit 125; done
  exec chroot "$root" "$shell" -l
' sh "$root" "$shell"
`;

export async function openLxdShell(
  client: LxdClient,
  instance: string,
  shells: readonly string[],
  size: TerminalSize,
  /** The unit's root in the instance, and HOME in it (a workload's `/`, a machine's /root, as locally). */
  at: { root: string; home: string },
): Promise<ShellSession | null> {
  const shell = shells.find((name) => (LXD_SHELLS as readonly string[]).includes(name));
  if (!shell) return null;
  const session = await startExec(client, instance, {
    command: ['/bin/sh', '-c', ROOTED, 'sh', at.root, `/bin/${shell}`],
    environment: { TERM: 'xterm-256color', HOME: at.home, PATH, LANG: 'C.UTF-8' },
    interactive: true,
    width: size.columns,
    height: size.rows,
    cwd: '/',
  });
  const terminal = session.streams['0']!;
  // The exit is told once the terminal's last bytes are out (LXD closes the stream after them).
  const closed = new Promise<void>((resolve) => terminal.once('close', () => resolve()));
  // What the shell says before the gateway listens (its first prompt) is kept for it.
  let early: Buffer[] | null = [];
  let dataListener: ((chunk: Buffer) => void) | null = null;
  terminal.on('message', (data: Buffer, isBinary: boolean) => {
    // LXD marks the end of a stream with an empty text frame.
    if (!isBinary && data.length === 0) return;
    if (dataListener) dataListener(data);
    else early?.push(data);
  });
  return {
    onData(listener) {
      dataListener = listener;
      for (const chunk of early ?? []) listener(chunk);
      early = null;
    },
    onExit: (listener) =>
      void session.exit.then(async (code) => {
        await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, DRAIN_MS).unref())]);
        listener(code);
      }),
    write(data) {
      if (terminal.readyState === terminal.OPEN) terminal.send(data, { binary: true });
    },
    resize: ({ columns, rows }) => session.resize(columns, rows),
    stop: () => session.close(HANGUP_GRACE_MS),
  };
}
