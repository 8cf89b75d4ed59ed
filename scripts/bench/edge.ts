// The local edge's cost (issues 21 and 36): forwarded TCP throughput and added round-trip latency through
// the edge's two forwarders against a direct connection to the unit's address, all three in interleaved
// slices of one run to the same sink: the kernel path (netfilter DNAT into the unit's network namespace,
// server/src/edge/forward-kernel.ts) and the user-space proxy (forward-tcp.ts), each as the edge runs it
// (forwarding.ts, in a process of its own, 50 ingress rules for the unit); and the cost of evaluating 50
// rules per connection at the proxy (server/src/edge/firewall.ts).
//
//   npx tsx scripts/bench/edge.ts         (also a section of `npm run bench`)
//
// Targets: the kernel path at least 0.8 of direct (goal 0.95); the proxy's ratio and the p50 added latency
// are reported. The unit is a sink/echo server on its own address in a network namespace of its own,
// joined by a veth pair (substrate/local/sandbox/network.ts), as a local unit runs. The kernel path needs
// root and iptables: elsewhere the unit listens on 127.64.0.250, the proxy alone is measured and the
// kernel path's floor counts as missed.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { DesiredPort } from '../../server/src/edge/desired.js';
import { admits, compileRule, type CompiledRule, type IngressRules } from '../../server/src/edge/firewall.js';
import { kernelForwardingProblem } from '../../server/src/edge/forward-kernel.js';
import { startForwarding } from '../../server/src/edge/forwarding.js';
import { unitAddressCandidate } from '../../server/src/substrate/local/address.js';
import { unitNetnsName } from '../../server/src/substrate/local/sandbox/names.js';
import {
  ensureHostGuard,
  ensureUnitNetwork,
  removeUnitNetwork,
} from '../../server/src/substrate/local/sandbox/network.js';

const LOOPBACK_UNIT = '127.64.0.250';
// Fixed, so a run killed before it cleaned up is adopted and cleaned by the next (forward-kernel.ts).
const UNIT_ID = '0b0c0000-0000-4000-8000-00000000ed9e';
const HOST = '127.0.0.1';
const FLOOR = 0.8;
const GOAL = 0.95;
const CHUNK = Buffer.alloc(64 * 1024, 7);

export interface EdgeReport {
  lines: string[];
  missed: string[];
}

async function listen(server: net.Server, host: string): Promise<number> {
  server.listen(0, host);
  await once(server, 'listening');
  return (server.address() as net.AddressInfo).port;
}

/** Bytes per second sent to `port` for `ms` (the server discards them and reports the total at the end). */
export async function throughput(port: number, host: string, ms: number): Promise<number> {
  const socket = net.connect({ host, port, noDelay: true });
  await once(socket, 'connect');
  let sent = 0;
  const started = performance.now();
  while (performance.now() - started < ms) {
    if (!socket.write(CHUNK)) await once(socket, 'drain');
    sent += CHUNK.length;
  }
  socket.end();
  await once(socket, 'close');
  return sent / ((performance.now() - started) / 1000);
}

/** Round-trip times (ms) of `count` 32-byte ping-pongs over one connection. */
async function roundTrips(port: number, host: string, count: number): Promise<number[]> {
  const socket = net.connect({ host, port, noDelay: true });
  await once(socket, 'connect');
  const times: number[] = [];
  const ping = Buffer.alloc(32, 1);
  for (let i = 0; i < count; i += 1) {
    const t = performance.now();
    const reply = once(socket, 'data');
    socket.write(ping);
    await reply;
    times.push(performance.now() - t);
  }
  socket.destroy();
  return times;
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** 50 rules no connection from 127.0.0.1 matches: the worst case, every rule evaluated. */
function fiftyRules(): CompiledRule[] {
  return Array.from({ length: 50 }, (_, i) =>
    compileRule({
      action: 'block',
      protocol: i % 2 ? 'tcp' : 'any',
      cidr: `10.${i}.0.0/16`,
      port_from: 1,
      port_to: 65535,
    }),
  );
}

type Path = 'direct' | 'kernel' | 'proxy';

export interface EdgeMeasure {
  /** Where the unit listened: its own network namespace, or a loopback address where that is not possible. */
  unit: { address: string; namespace: boolean };
  /** Why the kernel path was not measured (null: it was). */
  kernelProblem: string | null;
  /** Bytes per second (p50 of the slices) and round trip p50 in ms, per path. */
  throughput: Partial<Record<Path, number>>;
  /**
   * Per path, the p50 over rounds of its slice's throughput over the direct slice of the same round: a
   * round's slices run back to back, so load elsewhere that comes and goes cancels out of each ratio.
   */
  ratio: Partial<Record<Path, number>>;
  rounds: number;
  latencyMs: Partial<Record<Path, number>>;
  ruleNs: number;
  noRuleNs: number;
}

export async function measureEdge(options: { sliceMs?: number; slices?: number } = {}): Promise<EdgeMeasure> {
  const sliceMs = options.sliceMs ?? 750;
  const slices = options.slices ?? 12;
  const kernelProblem = kernelForwardingProblem(HOST);
  const namespace = kernelProblem === null;
  const address = namespace ? unitAddressCandidate(UNIT_ID) : LOOPBACK_UNIT;
  if (namespace) {
    await ensureHostGuard();
    await ensureUnitNetwork(UNIT_ID, address);
  }
  // The unit, the edge and the client each in a process of their own, as they run.
  const unit = await child(
    ['--unit', address],
    namespace ? ['ip', 'netns', 'exec', unitNetnsName(UNIT_ID)] : [],
  );
  const [sink, echo] = unit.ports as [number, number];
  let edge: Awaited<ReturnType<typeof child>> | null = null;
  try {
    edge = await child(['--edge', address, String(sink), String(echo), namespace ? 'kernel' : 'proxy']);
    const [proxySink, proxyEcho, kernelSink, kernelEcho] = edge.ports as [number, number, number, number];
    const target: Record<Path, { port: number; echo: number; host: string }> = {
      direct: { port: sink, echo, host: address },
      proxy: { port: proxySink, echo: proxyEcho, host: HOST },
      kernel: { port: kernelSink, echo: kernelEcho, host: HOST },
    };
    const paths: Path[] = namespace ? ['direct', 'kernel', 'proxy'] : ['direct', 'proxy'];
    const streams: Record<Path, number[]> = { direct: [], kernel: [], proxy: [] };
    const times: Record<Path, number[]> = { direct: [], kernel: [], proxy: [] };
    for (let i = 0; i < slices; i += 1) {
      // Each slice in another order (rotated, and reversed every other one): a burst of load elsewhere
      // hits every path alike.
      const rotated = paths.map((_, k) => paths[(k + i) % paths.length]!);
      for (const path of i % 2 ? rotated.reverse() : rotated)
        streams[path].push(await throughput(target[path].port, target[path].host, sliceMs));
    }
    for (let i = 0; i < slices; i += 1)
      for (const path of paths)
        times[path].push(...(await roundTrips(target[path].echo, target[path].host, 500)));
    const evaluate = (list: CompiledRule[]) => {
      const n = 200_000;
      let allowed = 0;
      const t = process.hrtime.bigint();
      for (let i = 0; i < n; i += 1)
        if (admits(list, 'tcp', '127.0.0.1', 40000 + (i & 1023), 22)) allowed += 1;
      const ns = Number(process.hrtime.bigint() - t) / n;
      if (allowed !== n) throw new Error('a rule matched that should not');
      return ns;
    };
    const rules = fiftyRules();
    evaluate(rules); // warm-up
    const ruleNs = evaluate(rules);
    const noRuleNs = evaluate([]);
    return {
      unit: { address, namespace },
      kernelProblem,
      throughput: Object.fromEntries(paths.map((p) => [p, p50(streams[p])])),
      ratio: Object.fromEntries(
        paths.map((p) => [p, p50(streams[p].map((bytes, round) => bytes / streams.direct[round]!))]),
      ),
      rounds: slices,
      latencyMs: Object.fromEntries(paths.map((p) => [p, p50(times[p])])),
      ruleNs,
      noRuleNs,
    };
  } finally {
    // The edge removes its kernel rules as it stops (SIGTERM), as a real edge does.
    if (edge) {
      edge.proc.kill('SIGTERM');
      if (edge.proc.exitCode === null) await once(edge.proc, 'exit');
    }
    unit.proc.kill();
    if (namespace) await removeUnitNetwork(UNIT_ID);
  }
}

/** This script again in a child (`--unit` or `--edge`), answering the ports it listens on. */
async function child(
  args: string[],
  prefix: string[] = [],
): Promise<{ proc: ChildProcess; ports: number[] }> {
  const argv = [process.execPath, ...process.execArgv, fileURLToPath(import.meta.url), ...args];
  const [file, ...rest] = [...prefix, ...argv] as [string, ...string[]];
  const proc = spawn(file, rest, { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: proc.stdout! }), 'line')) as [string];
  return { proc, ports: line.split(' ').map(Number) };
}

async function runUnit(address: string): Promise<void> {
  const sink = net.createServer((s) => s.resume().on('error', () => s.destroy()));
  const echo = net.createServer((s) => s.pipe(s).on('error', () => s.destroy()));
  process.stdout.write(`${await listen(sink, address)} ${await listen(echo, address)}\n`);
}

/** Ports free now on the edge's address (an allocation's external port is a number chosen in advance). */
async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => net.createServer());
  const ports = [];
  for (const server of servers) ports.push(await listen(server, HOST));
  await Promise.all(servers.map((server) => new Promise((r) => server.close(r))));
  return ports;
}

/**
 * The edge's forwarding as edge.ts runs it: the proxy forwarding the unit's sink and echo on two ports,
 * and (where it may) the kernel on two more, both with the unit's 50 ingress rules.
 */
async function runEdge(address: string, targets: number[], kernel: boolean): Promise<void> {
  const rules: IngressRules = new Map([[UNIT_ID, fiftyRules()]]);
  // Only a warning is worth a line: the bench's output is the report.
  const log = { info: () => {}, warn: (...args: unknown[]) => console.error(...args) };
  const ours = async (ids: string[]) => new Set(ids.filter((id) => id === UNIT_ID));
  const external = await freePorts(4);
  const allocation = (n: number, targetPort: number): DesiredPort => ({
    id: `00000000-0000-4000-8000-00000000000${n}`,
    resourceId: UNIT_ID,
    externalIp: HOST,
    externalPort: external[n]!,
    protocol: 'tcp',
    targetAddress: address,
    targetPort,
  });
  const proxy = await startForwarding({ host: HOST, mode: 'proxy', log, ours });
  await proxy.apply([allocation(0, targets[0]!), allocation(1, targets[1]!)], rules);
  const viaKernel = kernel ? await startForwarding({ host: HOST, mode: 'kernel', log, ours }) : null;
  await viaKernel?.apply([allocation(2, targets[0]!), allocation(3, targets[1]!)], rules);
  process.stdout.write(`${external.slice(0, kernel ? 4 : 2).join(' ')}\n`);
  process.once('SIGTERM', () => {
    void Promise.all([proxy.close(), viaKernel?.close()]).finally(() => process.exit(0));
  });
}

export function describeEdge(m: EdgeMeasure): EdgeReport {
  const mb = (b: number) => `${(b / 1e6).toFixed(0)} MB/s`;
  const µs = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
  const direct = m.throughput.direct!;
  const lines = [
    `  the unit: ${m.unit.namespace ? `its own network namespace (veth) at ${m.unit.address}` : `a loopback address, ${m.unit.address}`}; direct ${mb(direct)}; ${m.rounds} rounds, ratios the p50 of each round's to its direct slice`,
  ];
  const missed: string[] = [];
  const kernel = m.throughput.kernel;
  if (kernel === undefined) {
    lines.push(`  TCP through the edge's kernel path (DNAT): not measured (${m.kernelProblem})`);
    missed.push(`edge kernel path not measured: ${m.kernelProblem}`);
  } else {
    const ratio = m.ratio.kernel!;
    lines.push(
      `  TCP through the edge's kernel path (DNAT) ${mb(kernel)}: ${ratio.toFixed(2)} of direct (floor ${FLOOR}, goal ${GOAL})`,
    );
    if (ratio < FLOOR) missed.push(`edge kernel path ${ratio.toFixed(2)} of direct < ${FLOOR}`);
  }
  const proxy = m.throughput.proxy!;
  lines.push(
    `  TCP through the edge's user-space proxy ${mb(proxy)}: ${m.ratio.proxy!.toFixed(2)} of direct (reported; it serves where the kernel path may not)`,
  );
  const rtt = m.latencyMs;
  lines.push(
    `  round trip p50 direct ${µs(rtt.direct!)}` +
      (rtt.kernel === undefined
        ? ''
        : `, kernel path ${µs(rtt.kernel)} (${µs(rtt.kernel - rtt.direct!)} added)`) +
      `, proxy ${µs(rtt.proxy!)} (${µs(rtt.proxy! - rtt.direct!)} added)`,
    `  firewall at the proxy: 50 ingress rules evaluated (none matching) ${m.ruleNs.toFixed(0)} ns per connection, ${(m.ruleNs / Math.max(m.noRuleNs, 1)).toFixed(1)}x an empty ruleset (${m.noRuleNs.toFixed(0)} ns); the kernel path evaluates them at a connection's first packet only`,
  );
  return { lines, missed };
}

if (process.argv[2] === '--unit') await runUnit(process.argv[3]!);
else if (process.argv[2] === '--edge')
  await runEdge(process.argv[3]!, process.argv.slice(4, 6).map(Number), process.argv[6] === 'kernel');
else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const report = describeEdge(await measureEdge());
  process.stdout.write(`The local edge\n${report.lines.join('\n')}\n`);
  if (report.missed.length > 0) {
    process.stdout.write(`missed: ${report.missed.join('; ')}\n`);
    process.exitCode = 1;
  }
}
