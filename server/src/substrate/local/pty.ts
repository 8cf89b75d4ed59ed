// The local substrate's shell on a PTY of this machine (node-pty), running the confined command of
// shell.ts: the ShellSession the gateway bridges.
import { spawn } from '@lydell/node-pty';
import type { ShellSession, TerminalSize } from '../driver.js';
import type { ShellCommand } from './shell.js';

/** How long a shell has to go after SIGHUP before it is killed (bubblewrap then takes its sandbox along). */
const HANGUP_GRACE_MS = 2_000;

export function startPty(command: ShellCommand, size: TerminalSize): ShellSession {
  const pty = spawn(command.file, command.args, {
    name: 'xterm-256color',
    cols: size.columns,
    rows: size.rows,
    cwd: '/',
    env: command.env,
    // Bytes, not strings: a character split across two reads must reach the terminal whole.
    encoding: null,
  });
  // A shell that exited: its pid may be another process's by now, never to be signalled.
  let exited = false;
  pty.onExit(() => (exited = true));
  const signal = (name: string) => {
    try {
      if (!exited) process.kill(pty.pid, name);
    } catch {
      // gone already
    }
  };
  return {
    // With `encoding: null` node-pty hands out Buffers, though it types them as strings.
    onData: (listener) =>
      void pty.onData((data: string | Buffer) =>
        listener(typeof data === 'string' ? Buffer.from(data, 'utf8') : data),
      ),
    onExit: (listener) => void pty.onExit(({ exitCode }) => listener(exitCode)),
    // node-pty writes a Buffer as is (its socket takes bytes), though it types only strings.
    write: (data) => pty.write(data as unknown as string),
    resize: ({ columns, rows }) => {
      if (!exited) pty.resize(columns, rows);
    },
    // A sandbox caught in its set-up by the hangup must not outlive its session.
    stop() {
      signal('SIGHUP');
      setTimeout(() => signal('SIGKILL'), HANGUP_GRACE_MS).unref();
    },
  };
}
