// The edge's two forwarders side by side (server/src/edge/forwarding.ts): a unit in a network of its own
// (the local substrate's namespace and veth, sandbox/network.ts) echoing TCP and UDP, reached through an
// allocation by the user-space proxy and by the kernel's DNAT, from two client addresses on the host's
// loopback and from a remote client (a namespace of its own, routed to the host over a veth pair, as a
// player on the internet is). The same checks hold on both: what the unit sees, the ingress rules by
// source (for a UDP client already talking too), a released allocation, and which path carried the
// traffic. The kernel's own: nothing left behind when the edge stops, and a restarted edge adopting what
// a crashed one left.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import dgram from 'node:dgram';
import { once } from 'node:events';
import net from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DesiredPort } from '../../server/src/edge/desired.js';
import { compileRule, type IngressRules } from '../../server/src/edge/firewall.js';
import { kernelForwardingProblem } from '../../server/src/edge/forward-kernel.js';
import { startForwarding, type Forwarding } from '../../server/src/edge/forwarding.js';
import { run } from '../../server/src/edge/iptables.js';
import { unitAddressCandidate } from '../../server/src/substrate/local/address.js';
import { unitNetnsName } from '../../server/src/substrate/local/sandbox/names.js';
import {
  ensureHostGuard,
  ensureUnitNetwork,
  networkConfinable,
  removeUnitNetwork,
} from '../../server/src/substrate/local/sandbox/network.js';
import { ECHO_PROGRAM, randomPortPool } from '../support/edge.js';

const HOST = '127.0.0.1';
const CHILD = fileURLToPath(new URL('../support/forwarding-child.ts', import.meta.url));
const PROBE = fileURLToPath(new URL('../support/probe-client.mjs', import.meta.url));
const UNIT_PORT = 7000;
const unitId = randomUUID();
const address = unitAddressCandidate(unitId);
const [poolFrom] = randomPortPool(8).split('-').map(Number) as [number];
let unit: ChildProcess | null = null;
// The remote client's network: a /30 of 198.18.0.0/15 (set aside for tests, RFC 2544), the host's end
// named so the guard (`svh+`) does not take it for a unit's.
const tag = unitId.slice(0, 8);
const remoteNet = { ns: `svc-client-${tag}`, link: `sct${tag}`, third: Number.parseInt(tag.slice(0, 2), 16) };
const REMOTE_HOST = `198.18.${remoteNet.third}.1`;
const REMOTE_CLIENT = `198.18.${remoteNet.third}.2`;

const quiet = { info: () => {}, warn: () => {} };
const ours = async (ids: string[]) => new Set(ids.filter((id) => id === unitId));

function allocation(n: number, protocol: 'tcp' | 'udp'): DesiredPort {
  return {
    id: `00000000-0000-4000-8000-00000000000${n}`,
    resourceId: unitId,
    externalIp: HOST,
    externalPort: poolFrom + n,
    protocol,
    targetAddress: address,
    targetPort: UNIT_PORT,
  };
}
const tcpPort = allocation(1, 'tcp');
const udpPort = allocation(2, 'udp');

function ingress(...rules: Parameters<typeof compileRule>[0][]): IngressRules {
  return new Map(rules.length ? [[unitId, rules.map(compileRule)]] : []);
}
const block = (protocol: 'tcp' | 'udp', cidr: string) =>
  ({ action: 'block', protocol, cidr, port_from: UNIT_PORT, port_to: UNIT_PORT }) as const;

/** What a TCP client at `from` gets back for `text`: the echo, or refused. */
function tcp(port: number, from: string, text = 'hello'): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: HOST, port, localAddress: from });
    let got = '';
    socket.setTimeout(3_000, () => socket.destroy());
    socket.on('connect', () => socket.write(text));
    socket.on('data', (d) => {
      got += d.toString();
      if (got.length >= text.length) socket.end();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(got === '' ? 'refused' : got));
  });
}

/** A UDP client at `from` (one source port throughout): each send answers the reply, or nothing. */
async function udpClient(port: number, from: string) {
  const socket = dgram.createSocket('udp4');
  socket.bind(0, from);
  await once(socket, 'listening');
  // A datagram the kernel's firewall drops on its way out of this host fails the send (EPERM).
  socket.on('error', () => undefined);
  return {
    send(text: string): Promise<string> {
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          socket.off('message', onMessage);
          resolve('nothing');
        }, 1_000);
        const onMessage = (msg: Buffer) => {
          clearTimeout(timer);
          resolve(msg.toString());
        };
        socket.once('message', onMessage);
        socket.send(text, port, HOST, (err) => {
          if (!err) return;
          clearTimeout(timer);
          socket.off('message', onMessage);
          resolve('nothing');
        });
      });
    },
    close: () => socket.close(),
  };
}

async function udp(port: number, from: string, text = 'ping'): Promise<string> {
  const client = await udpClient(port, from);
  try {
    return await client.send(text);
  } finally {
    client.close();
  }
}

/** What the remote client gets back for `text` sent to the edge's remote address (`refused`, `nothing`). */
async function remote(protocol: 'tcp' | 'udp', port: number, text: string): Promise<string> {
  const child = spawn(
    'ip',
    ['netns', 'exec', remoteNet.ns, process.execPath, PROBE, protocol, REMOTE_HOST, String(port), text],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return line;
}

async function ip(...args: string[]): Promise<void> {
  const result = await run('ip', args);
  if (result.code !== 0) throw new Error(`ip ${args.join(' ')}: ${result.stderr.trim()}`);
}

/** Every rule on the host that names this unit (its chains are named for it and the edge's address). */
async function rulesOfUnit(): Promise<string[]> {
  const out = await Promise.all([
    run('iptables-save', ['-t', 'filter']),
    run('iptables-save', ['-t', 'nat']),
  ]);
  return out.flatMap((o) => o.stdout.split('\n')).filter((l) => l.includes(unitId));
}

const confinable = networkConfinable();

beforeAll(async () => {
  if (!confinable) return;
  await ensureHostGuard();
  await ensureUnitNetwork(unitId, address);
  await ip('netns', 'add', remoteNet.ns);
  await ip('link', 'add', remoteNet.link, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', remoteNet.ns);
  await ip('addr', 'add', `${REMOTE_HOST}/30`, 'dev', remoteNet.link);
  await ip('link', 'set', remoteNet.link, 'up');
  await ip('-n', remoteNet.ns, 'addr', 'add', `${REMOTE_CLIENT}/30`, 'dev', 'eth0');
  await ip('-n', remoteNet.ns, 'link', 'set', 'eth0', 'up');
  unit = spawn('ip', ['netns', 'exec', unitNetnsName(unitId), process.execPath, ECHO_PROGRAM], {
    env: { PATH: process.env.PATH, SVC_BIND_ADDRESS: address, ECHO_PORTS: String(UNIT_PORT) },
    stdio: 'ignore',
  });
  const deadline = Date.now() + 10_000;
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host: address, port: UNIT_PORT }, () => resolve(!!s.destroy()));
      s.once('error', () => resolve(false));
    });
    if (up) break;
    if (Date.now() > deadline) throw new Error('the unit did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
});
afterAll(async () => {
  unit?.kill();
  if (!confinable) return;
  // Whatever a failed check left (a killed edge's rules): an edge of this unit adopts and removes it.
  if (kernelForwardingProblem(HOST) === null)
    await (await startForwarding({ host: HOST, mode: 'kernel', log: quiet, ours })).close();
  await removeUnitNetwork(unitId);
  await run('ip', ['netns', 'del', remoteNet.ns]);
  await run('ip', ['link', 'del', remoteNet.link]);
});

describe.skipIf(!confinable).each(['proxy', 'kernel'] as const)('forwarding by the %s', (mode) => {
  let forwarding: Forwarding;
  beforeAll(async () => {
    forwarding = await startForwarding({ host: HOST, mode, log: quiet, ours });
    await forwarding.apply([tcpPort, udpPort], ingress());
  });
  afterAll(async () => {
    await forwarding?.close();
  });

  it('forwards TCP and UDP from any client, the unit seeing the host side of its veth', async () => {
    expect(forwarding.kernel).toBe(mode === 'kernel');
    expect(await tcp(tcpPort.externalPort, '127.0.0.2', 'over tcp')).toBe('over tcp');
    expect(await tcp(tcpPort.externalPort, '127.0.0.3', 'again')).toBe('again');
    expect(await udp(udpPort.externalPort, '127.0.0.2')).toBe('169.254.1.1|ping');
    expect(await udp(udpPort.externalPort, '127.0.0.3')).toBe('169.254.1.1|ping');
    // The path asked for carried every flow, the other none.
    const traffic = await forwarding.traffic();
    const carried = (id: string) => {
      const t = traffic.get(id)!;
      return {
        path: t.path,
        flows: mode === 'kernel' ? t.kernelFlows : t.proxyFlows,
        other: mode === 'kernel' ? t.proxyFlows : t.kernelFlows,
      };
    };
    expect(carried(tcpPort.id)).toEqual({ path: mode, flows: 2, other: 0 });
    expect(carried(udpPort.id)).toEqual({ path: mode, flows: 2, other: 0 });
  });

  it('holds the ingress rules by source, first match deciding, for a UDP client already talking too', async () => {
    const talking = await udpClient(udpPort.externalPort, '127.0.0.2');
    try {
      expect(await talking.send('first')).toBe('169.254.1.1|first');
      await forwarding.apply(
        [tcpPort, udpPort],
        ingress(block('tcp', '127.0.0.2/32'), block('udp', '127.0.0.2/32')),
      );
      expect(await tcp(tcpPort.externalPort, '127.0.0.2')).toBe('refused');
      expect(await tcp(tcpPort.externalPort, '127.0.0.3')).toBe('hello');
      expect(await talking.send('second')).toBe('nothing');
      expect(await udp(udpPort.externalPort, '127.0.0.2')).toBe('nothing');
      expect(await udp(udpPort.externalPort, '127.0.0.3')).toBe('169.254.1.1|ping');

      // An allow before a broader block; a rule on another port, or icmp, touches nothing.
      await forwarding.apply(
        [tcpPort, udpPort],
        ingress(
          { action: 'allow', protocol: 'any', cidr: '127.0.0.2/32', port_from: null, port_to: null },
          { ...block('tcp', '127.0.0.0/8'), port_from: UNIT_PORT + 1, port_to: UNIT_PORT + 1 },
          { action: 'block', protocol: 'icmp', cidr: null, port_from: null, port_to: null },
          { action: 'block', protocol: 'any', cidr: '127.0.0.0/8', port_from: UNIT_PORT, port_to: UNIT_PORT },
        ),
      );
      expect([
        await tcp(tcpPort.externalPort, '127.0.0.2'),
        await tcp(tcpPort.externalPort, '127.0.0.3'),
      ]).toEqual(['hello', 'refused']);
      expect(await talking.send('third')).toBe('169.254.1.1|third');
      expect(await udp(udpPort.externalPort, '127.0.0.3')).toBe('nothing');
      await forwarding.apply([tcpPort, udpPort], ingress());
      expect(await tcp(tcpPort.externalPort, '127.0.0.3')).toBe('hello');
      // The counts run on across rule changes: 2 connections before, 3 more admitted here.
      const traffic = (await forwarding.traffic()).get(tcpPort.id)!;
      expect(mode === 'kernel' ? traffic.kernelFlows : traffic.proxyFlows).toBeGreaterThanOrEqual(5);
    } finally {
      talking.close();
    }
  });

  it("forwards a remote client, held to the rules by its own address, which the kernel's DNAT shows the unit", async () => {
    const ports = [tcpPort, udpPort].map((p) => ({ ...p, externalIp: REMOTE_HOST }));
    const edge = await startForwarding({ host: REMOTE_HOST, mode, log: quiet, ours });
    try {
      // The proxy connects to the unit itself; the DNAT leaves the client's address as it was.
      const seen = mode === 'kernel' ? REMOTE_CLIENT : '169.254.1.1';
      await edge.apply(ports, ingress());
      expect(await remote('tcp', tcpPort.externalPort, 'from afar')).toBe('from afar');
      expect(await remote('udp', udpPort.externalPort, 'ping')).toBe(`${seen}|ping`);
      await edge.apply(ports, ingress(block('tcp', `${REMOTE_CLIENT}/32`), block('udp', '198.18.0.0/15')));
      expect(await remote('tcp', tcpPort.externalPort, 'blocked?')).toBe('refused');
      expect(await remote('udp', udpPort.externalPort, 'blocked?')).toBe('nothing');
      // The loopback edge of the same unit is another edge's: its forwarding is untouched.
      expect(await tcp(tcpPort.externalPort, '127.0.0.2')).toBe('hello');
      const traffic = (await edge.traffic()).get(tcpPort.id)!;
      expect(mode === 'kernel' ? traffic.kernelFlows : traffic.proxyFlows).toBeGreaterThanOrEqual(1);
    } finally {
      await edge.close();
    }
  });

  it('stops forwarding a released allocation, to a UDP client already talking too', async () => {
    const talking = await udpClient(udpPort.externalPort, '127.0.0.2');
    try {
      expect(await talking.send('before')).toBe('169.254.1.1|before');
      await forwarding.apply([], ingress());
      expect(forwarding.bound()).toEqual([]);
      expect(await tcp(tcpPort.externalPort, '127.0.0.2')).toBe('refused');
      expect(await talking.send('after')).toBe('nothing');
      expect(await udp(udpPort.externalPort, '127.0.0.3')).toBe('nothing');
      if (mode === 'kernel') expect(await rulesOfUnit()).toEqual([]);
      await forwarding.apply([tcpPort, udpPort], ingress());
      expect(await tcp(tcpPort.externalPort, '127.0.0.2')).toBe('hello');
    } finally {
      talking.close();
    }
  });
});

describe.skipIf(!confinable || kernelForwardingProblem(HOST) !== null)('the kernel path across edges', () => {
  it('leaves no rule behind when it stops, and a restart adopts and rewrites what a crash left', async () => {
    const first = await startForwarding({ host: HOST, mode: 'kernel', log: quiet, ours });
    await first.apply([tcpPort, udpPort], ingress(block('tcp', '127.0.0.2/32')));
    expect((await rulesOfUnit()).length).toBeGreaterThan(0);
    await first.close();
    expect(await rulesOfUnit()).toEqual([]);
    expect(await tcp(tcpPort.externalPort, '127.0.0.3')).toBe('refused');

    // A crash: the rules stay (and hold the firewall) with no edge; only its listeners went.
    const rules = [block('tcp', '127.0.0.2/32')];
    const crashed = spawn(process.execPath, ['--import', 'tsx', CHILD], {
      env: {
        ...process.env,
        FORWARDING: JSON.stringify({ host: HOST, unitId, ports: [tcpPort, udpPort], rules }),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [ready] = (await once(createInterface({ input: crashed.stdout! }), 'line')) as [string];
    expect(ready).toBe('ready');
    const left = await rulesOfUnit();
    expect(left.length).toBeGreaterThan(0);
    crashed.kill('SIGKILL');
    await once(crashed, 'exit');
    expect(await rulesOfUnit()).toEqual(left);
    expect(await tcp(tcpPort.externalPort, '127.0.0.2')).toBe('refused');
    expect(await tcp(tcpPort.externalPort, '127.0.0.3')).toBe('hello');

    // Another edge of another database on the same address leaves them alone.
    const stranger = await startForwarding({
      host: HOST,
      mode: 'kernel',
      log: quiet,
      ours: async () => new Set(),
    });
    await stranger.apply([], ingress());
    await stranger.close();
    expect(await rulesOfUnit()).toEqual(left);

    // The next edge of this database adopts them and, told the unit has only its UDP port and no rules,
    // rewrites them.
    const next = await startForwarding({ host: HOST, mode: 'kernel', log: quiet, ours });
    await next.apply([udpPort], ingress());
    expect(await tcp(tcpPort.externalPort, '127.0.0.3')).toBe('refused');
    expect(await udp(udpPort.externalPort, '127.0.0.2')).toBe('169.254.1.1|ping');
    expect((await rulesOfUnit()).filter((l) => l.includes(`--dport ${tcpPort.externalPort}`))).toEqual([]);
    await next.close();
    expect(await rulesOfUnit()).toEqual([]);
  });
});
