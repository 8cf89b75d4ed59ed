// A unit's program for the edge tests: echoes every TCP stream and UDP datagram it gets on its own
// address (SVC_BIND_ADDRESS) at each port of ECHO_PORTS, prefixing UDP replies with the sender it saw.
import dgram from 'node:dgram';
import net from 'node:net';

const address = process.env.SVC_BIND_ADDRESS;
if (!address) {
  process.stderr.write('SVC_BIND_ADDRESS is not set\n');
  process.exit(1);
}
for (const port of (process.env.ECHO_PORTS ?? '').split(',').filter(Boolean).map(Number)) {
  net.createServer((socket) => socket.pipe(socket).on('error', () => socket.destroy())).listen(port, address);
  const udp = dgram.createSocket('udp4');
  udp.on('message', (msg, rinfo) => udp.send(Buffer.concat([Buffer.from(`${rinfo.address}|`), msg]), rinfo.port, rinfo.address));
  udp.bind(port, address);
}
process.on('SIGTERM', () => process.exit(0));
