// Attaching to a workload's console on this machine: the abstract socket the unit's agent listens on,
// named with its key in console.json (agent/console.ts).
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import type { ConsoleEndpoint } from '../../agent/console.js';
import { readIfPresent } from './atomic-file.js';
import { UNIT_FILES } from './layout.js';

/** A socket carrying the console's bytes both ways (the scrollback first), or null when there is none. */
export async function openConsole(unitDir: string): Promise<Socket | null> {
  const text = await readIfPresent(join(unitDir, UNIT_FILES.console)).catch(() => null);
  if (text === null) return null;
  let endpoint: ConsoleEndpoint;
  try {
    endpoint = JSON.parse(text) as ConsoleEndpoint;
  } catch {
    return null;
  }
  if (!/^[a-z0-9-]{1,100}$/.test(endpoint.name) || !/^[0-9a-f]{64}$/.test(endpoint.key)) return null;
  return new Promise((resolve) => {
    const socket = connect({ path: `\0${endpoint.name}` });
    socket.once('error', () => resolve(null));
    socket.once('connect', () => {
      socket.removeAllListeners('error');
      socket.write(`${endpoint.key}\n`);
      resolve(socket);
    });
  });
}
