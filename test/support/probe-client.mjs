// A client for a test to run from elsewhere (another network namespace, `ip netns exec`): sends TEXT to
// HOST:PORT over tcp or udp and prints what came back, `refused` or `nothing`.
//   node probe-client.mjs tcp|udp HOST PORT TEXT
import dgram from 'node:dgram';
import net from 'node:net';

const [protocol, host, port, text] = process.argv.slice(2);
const done = (answer) => {
  process.stdout.write(`${answer}\n`);
  process.exit(0);
};
setTimeout(() => done('nothing'), 1_500);
if (protocol === 'udp') {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (msg) => done(msg.toString()));
  socket.on('error', () => done('nothing'));
  socket.send(text, Number(port), host);
} else {
  const socket = net.connect({ host, port: Number(port) });
  let got = '';
  socket.on('connect', () => socket.write(text));
  socket.on('data', (d) => {
    got += d.toString();
    if (got.length >= text.length) done(got);
  });
  socket.on('error', () => done('refused'));
  socket.on('close', () => done(got === '' ? 'refused' : got));
}
