// A host outside the platform for tests of what units reach: a network namespace of its own, joined to
// this host by a veth pair and routed like any network beyond it, with TCP listeners on its addresses
// that count what they accept. A unit's connections to it leave the unit's namespace, cross the host's
// forwarding (the guard and the edge's egress rules) and arrive here, as they would at a server on the
// Internet. Needs root and iproute2 (what confining units needs).
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';

export interface RemoteListener {
  address: string;
  port: number;
  accepted: number;
}

export interface RemoteHost {
  /** The /29 the host's addresses are in (for rules naming the whole network). */
  network: string;
  listeners: RemoteListener[];
  stop(): Promise<void>;
}

const SERVER = `
const net = require('node:net');
for (const address of process.argv.slice(1)) {
  net.createServer((s) => { s.on('error', () => {}); console.log('accepted ' + address); s.end('hello\\n'); })
    .listen(7000, address, () => console.log('listening ' + address));
}`;

/** Starts a remote host with `count` addresses (at most 5), each listening on TCP port 7000. */
export async function startRemoteHost(count = 2): Promise<RemoteHost> {
  const tag = randomBytes(4).toString('hex');
  const ns = `svc-remote-${tag}`;
  const veth = `svr${tag}`;
  // 198.18.0.0/15 (RFC 2544, benchmarking): a /29 per remote host, picked at random.
  const block = randomBytes(2).readUInt16BE(0) % 16384;
  const base = `198.${18 + (block >> 13)}.${(block >> 5) & 0xff}.${(block & 31) * 8}`;
  const octets = base.split('.').map(Number);
  const at = (n: number) => `${octets[0]}.${octets[1]}.${octets[2]}.${octets[3]! + n}`;
  const addresses = Array.from({ length: count }, (_, i) => at(i + 2));
  const ip = (args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  ip(['netns', 'add', ns]);
  ip(['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
  ip(['addr', 'add', `${at(1)}/29`, 'dev', veth]);
  ip(['link', 'set', veth, 'up']);
  ip(['-n', ns, 'link', 'set', 'lo', 'up']);
  for (const address of addresses) ip(['-n', ns, 'addr', 'add', `${address}/29`, 'dev', 'eth0']);
  ip(['-n', ns, 'link', 'set', 'eth0', 'up']);
  ip(['-n', ns, 'route', 'add', 'default', 'via', at(1)]);

  const listeners: RemoteListener[] = addresses.map((address) => ({ address, port: 7000, accepted: 0 }));
  const server: ChildProcess = spawn(
    'nsenter',
    [`--net=/run/netns/${ns}`, process.execPath, '-e', SERVER, ...addresses],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let listening = 0;
  const ready = new Promise<void>((resolve, reject) => {
    server.once('exit', (code) => reject(new Error(`the remote host's server exited with ${code}`)));
    createInterface({ input: server.stdout! }).on('line', (line) => {
      const [what, address] = line.split(' ');
      if (what === 'listening' && ++listening === count) resolve();
      const listener = listeners.find((l) => l.address === address);
      if (what === 'accepted' && listener) listener.accepted += 1;
    });
  });
  await ready;
  return {
    network: `${base}/29`,
    listeners,
    stop: async () => {
      server.kill('SIGKILL');
      try {
        ip(['netns', 'del', ns]);
      } catch {
        // gone already
      }
    },
  };
}
