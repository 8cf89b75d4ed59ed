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

/** Where the environment says to listen, or null for nowhere. */
export function listenAddress(): { host: string; port: number } | null {
  const port = Number(process.env[LISTEN_ENV.port]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) return null;
  return { host: process.env[LISTEN_ENV.address] || '127.0.0.1', port };
}

export function runConsole(name: string, commands: Record<string, Command>, onStop?: () => void): void {
  const all: Record<string, Command> = {
    help: (_args, out) => out(`Commands: ${Object.keys(all).sort().join(', ')}`),
    stop: (_args, out) => {
      out(`Stopping ${name}`);
      onStop?.();
      process.exit(0);
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
    onStop?.();
    process.exit(0);
  });
}
