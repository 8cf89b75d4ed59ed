// `svcctl console ID RESOURCE_ID`: the terminal attached to a workload's command console through the edge
// gateway, like telnet: raw mode on a terminal, Ctrl-] leaves. Without a terminal, stdin is sent as it
// comes and the command leaves a moment after stdin ends (`echo list | svcctl console ...`). --ticket
// prints the ticket instead (for another client, or a browser). `svcctl shell ID RESOURCE_ID`: a shell
// in the workload or machine on a PTY of this terminal's size, resized on SIGWINCH; exits with the
// shell's exit code.
import {
  openConsoleSocket,
  openShellSocket,
  resizeShell,
  SvcSocketRefused,
  type ShellControl,
  type SvcClient,
  type SessionClient,
} from '@svcplatform/sdk';
import type WebSocket from 'ws';
import type { ParsedInput } from './argv/spec.js';
import { CliError } from './errors.js';
import { ExitCode, exitCodeForStatus } from './exit-codes.js';
import type { GlobalFlags } from './global-options.js';
import { writeResult } from './output/write-result.js';
import { openClient } from './sdk-client.js';
import { requireSignIn, resolveSettings } from './settings.js';

/** Ctrl-] (GS), as telnet's escape. */
const ESCAPE = 0x1d;
/** Without a terminal: how long the console is still read after stdin ended. */
const LINGER_MS = 1_000;

export async function runConsole(input: ParsedInput): Promise<void> {
  const [id, resourceId] = input.args as [string, string];
  const opts = input.options as { ticket?: boolean };
  const settings = await resolveSettings(input.globals as GlobalFlags);
  requireSignIn(settings);
  const client: SvcClient | SessionClient = await openClient(settings);
  const ticket = await client.consoleTicketCreate({ path: { id, resource_id: resourceId } });
  if (opts.ticket) {
    await writeResult(ticket, settings);
    return;
  }
  const ws = await openConsoleSocket(ticket.url).catch(refused('console'));
  await attachTerminal(ws, 'console');
}

/** A refused upgrade as svcctl's exit codes say it (401 spent or expired ticket, 429, 503 not running). */
export const refused =
  (what: string) =>
  (err: unknown): never => {
    if (err instanceof SvcSocketRefused) {
      const why =
        err.status === 429
          ? 'too many open sockets'
          : err.status === 503
            ? 'it is not running'
            : `HTTP ${err.status}`;
      throw new CliError(`the gateway refused the ${what}: ${why}`, exitCodeForStatus(err.status));
    }
    throw err;
  };

/** Pipes the terminal to the socket until either ends; rejects with a CliError for an abnormal close. */
export function attachTerminal(ws: WebSocket, what: string, options: { escape?: boolean } = {}): Promise<void> {
  const stdin = process.stdin;
  const tty = stdin.isTTY === true;
  // A shell is left by its own exit (Ctrl-] belongs to the programs in it); a console by Ctrl-].
  const escape = options.escape !== false;
  if (tty) {
    process.stderr.write(escape ? `Connected to the ${what}. Ctrl-] leaves.\r\n` : `Connected to the ${what}.\r\n`);
    stdin.setRawMode(true);
  }
  return new Promise((resolve, reject) => {
    let leaving = false;
    const leave = () => {
      leaving = true;
      ws.close(1000);
    };
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) process.stdout.write(data);
    });
    const onData = (chunk: Buffer) => {
      const at = tty && escape ? chunk.indexOf(ESCAPE) : -1;
      if (at >= 0) {
        if (at > 0) ws.send(chunk.subarray(0, at));
        leave();
        return;
      }
      ws.send(chunk);
    };
    stdin.on('data', onData);
    stdin.once('end', () => setTimeout(leave, LINGER_MS).unref());
    ws.once('close', (code, reason) => {
      stdin.off('data', onData);
      if (tty) stdin.setRawMode(false);
      stdin.pause();
      if (tty) process.stderr.write('\r\n');
      if (leaving || code === 1000) return resolve();
      if (code === 4001)
        return reject(new CliError(`the ${what} was closed: your access to it ended`, ExitCode.auth));
      const ends: Record<number, string> = { 4002: 'idle too long', 4003: 'open for its maximum length', 4004: 'a bad control message' };
      if (ends[code]) return reject(new CliError(`the ${what} was closed: ${ends[code]}`, ExitCode.server));
      reject(
        new CliError(
          `the ${what} was closed (${code}${reason.length ? ` ${reason.toString()}` : ''})`,
          ExitCode.server,
        ),
      );
    });
  });
}

/** The PTY size of this terminal (80x24 without one), within the gateway's bounds (500x200). */
function terminalSize(): { columns: number; rows: number } {
  const clamp = (n: number | undefined, fallback: number, max: number) =>
    Math.min(max, Math.max(1, Number.isInteger(n) && n! > 0 ? n! : fallback));
  return { columns: clamp(process.stdout.columns, 80, 500), rows: clamp(process.stdout.rows, 24, 200) };
}

export async function runShell(input: ParsedInput): Promise<void> {
  const [id, resourceId] = input.args as [string, string];
  const opts = input.options as { ticket?: boolean; container?: string };
  const settings = await resolveSettings(input.globals as GlobalFlags);
  requireSignIn(settings);
  const client: SvcClient | SessionClient = await openClient(settings);
  const ticket = await client.shellTicketCreate({
    path: { id, resource_id: resourceId },
    query: opts.container ? { container: opts.container } : {},
  });
  if (opts.ticket) {
    await writeResult(ticket, settings);
    return;
  }
  const ws = await openShellSocket(ticket.url, terminalSize()).catch(refused('shell'));
  let exitCode: number | null = null;
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) return;
    const control = JSON.parse(data.toString('utf8')) as ShellControl;
    if (control.type === 'exit') exitCode = control.code;
  });
  const onResize = () => {
    const { columns, rows } = terminalSize();
    resizeShell(ws, columns, rows);
  };
  process.stdout.on('resize', onResize);
  try {
    await attachTerminal(ws, 'shell', { escape: false });
  } finally {
    process.stdout.off('resize', onResize);
  }
  if (exitCode !== null && exitCode !== 0) process.exitCode = exitCode;
}
