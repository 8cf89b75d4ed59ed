// The block game's built-in server program (the `block-game` product): a command console in the form a
// Minecraft server prints, and a TCP listener on the unit's address when one is given. A later issue puts
// a real Minecraft server in its place (catalog `workload_program`).
import { createServer } from 'node:net';
import { listenAddress, logLine, runConsole } from './console-loop.js';

const started = Date.now();
const players = new Set<string>();
logLine('Starting block game server');
const at = listenAddress('tcp', 25565);
if (at) {
  const server = createServer((socket) => socket.end());
  server.on('error', (err: NodeJS.ErrnoException) =>
    logLine(`Cannot listen: ${err.code ?? 'error'}`, 'ERROR'),
  );
  server.listen(at.port, at.host, () => logLine(`Listening on ${at.host}:${at.port}`));
}
logLine(`Done (${((Date.now() - started) / 1000).toFixed(3)}s)! For help, type "help"`);

runConsole('the server', {
  list: (_args, out) =>
    out(`There are ${players.size} of a max of 20 players online: ${[...players].join(', ')}`),
  say: (args, out) => out(`[Server] ${args}`),
  echo: (args, out) => out(args),
  seed: (_args, out) => out('Seed: [1234567890]'),
});
