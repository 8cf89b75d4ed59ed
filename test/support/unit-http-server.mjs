// A program of a unit's own for the HTTP ingress tests, run in the unit's network namespace (a local
// unit's address is there: substrate/local/sandbox/network.ts): an HTTP server on the address given
// that tells what it was sent, echoes a POST's body as it streams in, and answers WebSockets. Prints the
// port it listens on.
import http from 'node:http';
import { WebSocketServer } from 'ws';

const server = http.createServer((req, res) => {
  if (req.method === 'POST') {
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      'x-seen-length': req.headers['content-length'] ?? 'chunked',
    });
    req.pipe(res);
    return;
  }
  res.writeHead(200, {
    'content-type': 'application/json',
    connection: 'keep-alive',
    'keep-alive': 'timeout=5',
  });
  res.end(JSON.stringify({ url: req.url, headers: req.headers }));
});
const wss = new WebSocketServer({ server });
wss.on('connection', (socket) => socket.on('message', (data) => socket.send(`echo:${data.toString()}`)));
server.listen(0, process.argv[2], () => process.stdout.write(`${server.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
