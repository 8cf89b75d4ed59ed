// The command console the built-in workload programs share: one command per line on stdin, answers and
// log lines on stdout in the `[HH:MM:SS] [thread/LEVEL]: message` form game servers print. `stop` ends
// the program (exit 0), as it ends a real game server; end of input keeps it running (nobody attached).
import { createInterface } from 'node:readline';
import { LISTEN_ENV } from './command.js';

export type Command = (args: string, out: (line: string) => void) => void;

export function logLine(message: string, level = 'INFO', thread = 'Server thread'): void {
  const time = new Date().toISOString().slice(11, 19);
  process.stdout.write(`[${time}] [${thread}/${level}]: ${message}\n`);
}

/**
 * Where to listen for `protocol`: the unit's address, at the internal port of its first endpoint of
 * that protocol, else at `defaultPort` (the catalog's); null (nowhere) when the unit has no address.
 */
export function listenAddress(protocol: string, defaultPort: number): { host: string; port: number } | null {
  const host = process.env[LISTEN_ENV.address];
  if (!host) return null;
  let port = defaultPort;
  try {
    const endpoints = JSON.parse(process.env[LISTEN_ENV.endpoints] ?? '[]') as unknown;
    const found = Array.isArray(endpoints)
      ? (endpoints as { protocols?: unknown; internal_port?: unknown }[]).find(
          (e) =>
            Array.isArray(e?.protocols) &&
            e.protocols.includes(protocol) &&
            Number.isInteger(e.internal_port),
        )
      : undefined;
    if (found) port = found.internal_port as number;
  } catch {
    // Not JSON: the catalog's port.
  }
  return { host, port };
}

/** Runs the console; `onStop` (awaited) ends what the program started before it exits. */
export function runConsole(
  name: string,
  commands: Record<string, Command>,
  onStop?: () => void | Promise<void>,
): void {
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void Promise.resolve()
      .then(onStop)
      .catch(() => undefined)
      .finally(() => process.exit(0));
  };
  const all: Record<string, Command> = {
    help: (_args, out) => out(`Commands: ${Object.keys(all).sort().join(', ')}`),
    stop: (_args, out) => {
      out(`Stopping ${name}`);
      stop();
    },
    ...commands,
  };
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (raw) => {
    const line = raw.trim().replace(/^\//, '');
    if (line === '') return;
    const space = line.indexOf(' ');
    const verb = (space < 0 ? line : line.slice(0, space)).toLowerCase();
    const args = space < 0 ? '' : line.slice(space + 1).trim();
    const command = all[verb];
    if (command) command(args, (text) => logLine(text));
    else logLine(`Unknown command "${verb}". Type "help" for help.`, 'WARN');
  });
  process.on('SIGTERM', () => {
    logLine(`Stopping ${name}`);
    stop();
  });
}
