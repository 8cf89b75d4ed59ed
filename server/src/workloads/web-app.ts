// The web app's program (the `web-app` product; DECISIONS.md §8 "A web app serves what its volume
// holds"), deciding at each start from what its volume holds: a /package.json with scripts.start runs
// `npm start` (./web/npm-app.ts); otherwise a static server answers from /public (./web/static-site.ts).
// A volume with neither yet (a new site) answers a placeholder page. The working directory is the
// volume (HOME too, and soon the sandbox's `/`): every path is relative to it, none a host path.
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { listenAddress, logLine, runConsole } from './console-loop.js';
import { hasStartScript, runNpmApp, type RunningApp } from './web/npm-app.js';
import { staticSite } from './web/static-site.js';

const volume = process.cwd();
const at = listenAddress('http', 8080);
let app: RunningApp | null = null;

if (at && hasStartScript(volume)) {
  app = runNpmApp(volume, at);
} else if (at) {
  const site = existsSync('public') ? staticSite('public') : null;
  const server = createServer((req, res) => {
    if (site) return site(req, res);
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('The web app runs.\n');
  });
  server.on('error', (err: NodeJS.ErrnoException) =>
    logLine(`Cannot listen: ${err.code ?? 'error'}`, 'ERROR'),
  );
  server.listen(at.port, at.host, () =>
    logLine(`Serving ${site ? 'public/' : 'the placeholder page'} on http://${at.host}:${at.port}`),
  );
}
logLine('Web app ready');
runConsole('the web app', { echo: (args, out) => out(args) }, () => app?.stop());
