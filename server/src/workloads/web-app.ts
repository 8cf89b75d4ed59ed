// The web app's built-in program (the `web-app` product): an HTTP server on the unit's address serving
// the files of its volume's public/ directory would be the real thing; this one answers every request
// with a short page, and keeps the console the other programs have.
import { createServer } from 'node:http';
import { listenAddress, logLine, runConsole } from './console-loop.js';

const at = listenAddress('http', 8080);
if (at) {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('The web app runs.\n');
  });
  server.on('error', (err: NodeJS.ErrnoException) =>
    logLine(`Cannot listen: ${err.code ?? 'error'}`, 'ERROR'),
  );
  server.listen(at.port, at.host, () => logLine(`Listening on http://${at.host}:${at.port}`));
}
logLine('Web app ready');
runConsole('the web app', { echo: (args, out) => out(args) });
