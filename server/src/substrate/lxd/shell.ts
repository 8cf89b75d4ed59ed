// A shell in a unit of the LXD substrate: an interactive exec (LXD's PTY inside the instance, its size
// and window changes through the control stream). The shell is the instance's own (busybox sh of the unit
// image) and sees the instance, nothing of the member's host; it starts in the unit's volume (a machine's
// root file system on it).
import type { ShellSession, TerminalSize } from '../driver.js';
import type { LxdClient } from './client.js';
import { startExec } from './exec-session.js';

/** What the unit image offers (image.ts: busybox), tried in order (the ticket's `shells`). */
export const LXD_SHELLS = ['sh'] as const;
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** How long a shell has to go after SIGHUP before it is killed. */
const HANGUP_GRACE_MS = 2_000;
const DRAIN_MS = 1_000;

export async function openLxdShell(
  client: LxdClient,
  instance: string,
  shells: readonly string[],
  size: TerminalSize,
  cwd: string,
): Promise<ShellSession | null> {
  const shell = shells.find((name) => (LXD_SHELLS as readonly string[]).includes(name));
  if (!shell) return null;
  const session = await startExec(client, instance, {
    command: [`/bin/${shell}`],
    environment: { TERM: 'xterm-256color', HOME: '/root', PATH, LANG: 'C.UTF-8' },
    interactive: true,
    width: size.columns,
    height: size.rows,
    cwd,
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
    onExit: (listener) => void session.exit.then(async (code) => {
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
