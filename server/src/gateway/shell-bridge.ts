// A shell on a PTY (DECISIONS.md §6 "Shell"; seed §4): subprotocol svc-pty-v1, binary frames the
// terminal's bytes both ways, text frames JSON control messages. The client resizes with
// {type: "resize", columns, rows} (out of range, or anything else malformed, ends the session); the
// gateway sends {type: "exit", code} when the shell exits and {type: "session_end", reason} before it
// closes. Idle (no input) for SHELL_IDLE_SECONDS or open for SHELL_MAX_SECONDS ends the session.
import { spawn, type IPty } from '@lydell/node-pty';
import type { WebSocket } from 'ws';
import type { ShellCommand } from '../substrate/driver.js';
import { CLOSE } from './close-codes.js';

export const PTY_SUBPROTOCOL = 'svc-pty-v1';
/** Seed §8 "shell size". */
export const COLUMNS = { min: 1, max: 500 };
export const ROWS = { min: 1, max: 200 };

export type SessionEndReason =
  | 'exited'
  | 'idle'
  | 'max_length'
  | 'invalid_control'
  | 'access_ended'
  | 'gateway_shutdown'
  | 'stopped'
  | 'closed';

export function sizeInRange(columns: unknown, rows: unknown): columns is number {
  return (
    Number.isInteger(columns) &&
    Number.isInteger(rows) &&
    (columns as number) >= COLUMNS.min &&
    (columns as number) <= COLUMNS.max &&
    (rows as number) >= ROWS.min &&
    (rows as number) <= ROWS.max
  );
}

/** `?columns=C&rows=R` of the upgrade URL, or null when missing or out of range. */
export function sizeOf(url: URL): { columns: number; rows: number } | null {
  const parse = (name: string) => {
    const raw = url.searchParams.get(name);
    return raw !== null && /^\d{1,4}$/.test(raw) ? Number(raw) : NaN;
  };
  const columns = parse('columns');
  const rows = parse('rows');
  return sizeInRange(columns, rows) ? { columns, rows } : null;
}

/** Shells that exited: their pid may be another process's by now, never to be signalled. */
const exitedPtys = new WeakSet<IPty>();

export function startPty(command: ShellCommand, size: { columns: number; rows: number }): IPty {
  const pty = spawn(command.file, command.args, {
    name: 'xterm-256color',
    cols: size.columns,
    rows: size.rows,
    cwd: '/',
    env: command.env,
    // Bytes, not strings: a character split across two reads must reach the terminal whole.
    encoding: null,
  });
  pty.onExit(() => exitedPtys.add(pty));
  return pty;
}

/** How long a shell has to go after SIGHUP before it is killed (bubblewrap then takes its sandbox along). */
const HANGUP_GRACE_MS = 2_000;

/**
 * Hangs the shell up, and kills it if it is still there after the grace: a sandbox caught in its set-up
 * by the hangup must not outlive its session.
 */
export function stopPty(pty: IPty): void {
  const signal = (name: string) => {
    try {
      if (!exitedPtys.has(pty)) process.kill(pty.pid, name);
    } catch {
      // gone already
    }
  };
  signal('SIGHUP');
  setTimeout(() => signal('SIGKILL'), HANGUP_GRACE_MS);
}

export function bridgeShell(
  ws: WebSocket,
  pty: IPty,
  limits: { idleSeconds: number; maxSeconds: number },
): (reason: SessionEndReason, code: number) => void {
  let ended = false;
  const end = (reason: SessionEndReason, code: number) => {
    if (ended) return;
    ended = true;
    clearTimeout(idle);
    clearTimeout(max);
    if (ws.readyState === ws.OPEN) {
      ws.send(JSON.stringify({ type: 'session_end', reason }));
      ws.close(code, reason);
    }
    stopPty(pty);
  };
  let idle = setTimeout(() => end('idle', CLOSE.idle), limits.idleSeconds * 1000);
  const max = setTimeout(() => end('max_length', CLOSE.maxLength), limits.maxSeconds * 1000);
  const active = () => {
    clearTimeout(idle);
    idle = setTimeout(() => end('idle', CLOSE.idle), limits.idleSeconds * 1000);
  };

  // With `encoding: null` node-pty hands out Buffers, though it types them as strings.
  pty.onData((data: string | Buffer) => {
    if (ws.readyState === ws.OPEN)
      ws.send(typeof data === 'string' ? Buffer.from(data, 'utf8') : data, { binary: true });
  });
  pty.onExit(({ exitCode }) => {
    if (ended) return;
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: 'exit', code: exitCode }));
    end('exited', CLOSE.ended);
  });
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (ended) return;
    active();
    if (isBinary) {
      // node-pty writes a Buffer as is (its socket takes bytes), though it types only strings.
      pty.write(data as unknown as string);
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(data.toString('utf8'));
    } catch {
      return end('invalid_control', CLOSE.badControl);
    }
    const m = message as { type?: unknown; columns?: unknown; rows?: unknown };
    if (m.type !== 'resize' || !sizeInRange(m.columns, m.rows))
      return end('invalid_control', CLOSE.badControl);
    pty.resize(m.columns, m.rows as number);
  });
  ws.once('close', () => end('closed', CLOSE.ended));
  return end;
}
