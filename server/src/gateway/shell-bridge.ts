// A shell on a PTY (DECISIONS.md §6 "Shell"; seed §4): subprotocol svc-pty-v1, binary frames the
// terminal's bytes both ways, text frames JSON control messages. The client resizes with
// {type: "resize", columns, rows} (out of range, or anything else malformed, ends the session); the
// gateway sends {type: "exit", code} when the shell exits and {type: "session_end", reason} before it
// closes. Idle (no input) for SHELL_IDLE_SECONDS or open for SHELL_MAX_SECONDS ends the session.
import type { WebSocket } from 'ws';
import type { ShellSession } from '../substrate/driver.js';
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

export function bridgeShell(
  ws: WebSocket,
  shell: ShellSession,
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
    shell.stop();
  };
  let idle = setTimeout(() => end('idle', CLOSE.idle), limits.idleSeconds * 1000);
  const max = setTimeout(() => end('max_length', CLOSE.maxLength), limits.maxSeconds * 1000);
  const active = () => {
    clearTimeout(idle);
    idle = setTimeout(() => end('idle', CLOSE.idle), limits.idleSeconds * 1000);
  };

  shell.onData((data) => {
    if (ws.readyState === ws.OPEN) ws.send(data, { binary: true });
  });
  shell.onExit((exitCode) => {
    if (ended) return;
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: 'exit', code: exitCode }));
    end('exited', CLOSE.ended);
  });
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (ended) return;
    active();
    if (isBinary) {
      shell.write(data);
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
    shell.resize({ columns: m.columns, rows: m.rows as number });
  });
  ws.once('close', () => end('closed', CLOSE.ended));
  return end;
}
