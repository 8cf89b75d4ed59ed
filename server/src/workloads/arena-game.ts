// The arena game's built-in server program (the `arena-game` product): a command console in the form
// ioq3ded prints, and a UDP socket on the unit's address when one is given.
import { createSocket } from 'node:dgram';
import { listenAddress, logLine, runConsole } from './console-loop.js';

logLine('Arena game dedicated server starting');
const at = listenAddress('udp', 27960);
if (at) {
  const socket = createSocket('udp4');
  socket.on('error', (err: NodeJS.ErrnoException) =>
    logLine(`Cannot listen: ${err.code ?? 'error'}`, 'ERROR'),
  );
  socket.bind(at.port, at.host, () => logLine(`Opening IP socket: ${at.host}:${at.port}`));
}
logLine('Server ready');

runConsole('the arena', {
  status: (_args, out) => out('map: tiny, num score ping name: (no players)'),
  say: (args, out) => out(`broadcast: print "server: ${args}"`),
  echo: (args, out) => out(args),
});
