// The local edge's cost (issue 21): forwarded TCP throughput and added round-trip latency through the
// edge's forwarder (server/src/edge/forward-tcp.ts, the code the edge runs, with 50 ingress rules to
// evaluate on every connection) against a direct connection to the unit's address in the same run, in
// interleaved slices; and the cost of evaluating 50 rules per direction (server/src/edge/firewall.ts).
//
//   npx tsx scripts/bench/edge.ts         (also a section of `npm run bench`)
//
// Targets: throughput through the edge at least 0.5 of direct (goal 0.8); the p50 added latency is
// reported. The unit is a sink/echo server on 127.64.0.250, as a unit's program listens on its own address.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { admits, compileRule, type CompiledRule } from '../../server/src/edge/firewall.js';
import { forwardTcp } from '../../server/src/edge/forward-tcp.js';

const UNIT_ADDRESS = '127.64.0.250';
const FLOOR = 0.5;
const GOAL = 0.8;
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

export async function measureEdge(options: { sliceMs?: number; slices?: number } = {}): Promise<{
  direct: number;
  forwarded: number;
  latencyDirectMs: number;
  latencyForwardedMs: number;
  ruleNs: number;
  noRuleNs: number;
}> {
  const sliceMs = options.sliceMs ?? 1500;
  const slices = options.slices ?? 4;
  // The unit, the edge and the client each in a process of their own, as they run.
  const unit = await child(['--unit']);
  const [sinkPort, echoPort] = unit.ports as [number, number];
  const edge = await child(['--edge', String(sinkPort), String(echoPort)]);
  const [sinkEdgePort, echoEdgePort] = edge.ports as [number, number];
  const rules = fiftyRules();
  try {
    const direct: number[] = [];
    const forwarded: number[] = [];
    for (let i = 0; i < slices; i += 1) {
      // A B, B A, ...: a burst of load elsewhere hits both alike.
      if (i % 2 === 0) {
        direct.push(await throughput(sinkPort, UNIT_ADDRESS, sliceMs));
        forwarded.push(await throughput(sinkEdgePort, '127.0.0.1', sliceMs));
      } else {
        forwarded.push(await throughput(sinkEdgePort, '127.0.0.1', sliceMs));
        direct.push(await throughput(sinkPort, UNIT_ADDRESS, sliceMs));
      }
    }
    const latencyDirect: number[] = [];
    const latencyForwarded: number[] = [];
    for (let i = 0; i < slices; i += 1) {
      latencyDirect.push(...(await roundTrips(echoPort, UNIT_ADDRESS, 500)));
      latencyForwarded.push(...(await roundTrips(echoEdgePort, '127.0.0.1', 500)));
    }
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
    evaluate(rules); // warm-up
    const ruleNs = evaluate(rules);
    const noRuleNs = evaluate([]);
    return {
      direct: p50(direct),
      forwarded: p50(forwarded),
      latencyDirectMs: p50(latencyDirect),
      latencyForwardedMs: p50(latencyForwarded),
      ruleNs,
      noRuleNs,
    };
  } finally {
    edge.proc.kill();
    unit.proc.kill();
  }
}

/** This script again in a child (`--unit` or `--edge`), answering the ports it listens on. */
async function child(args: string[]): Promise<{ proc: ChildProcess; ports: number[] }> {
  const proc = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(createInterface({ input: proc.stdout! }), 'line')) as [string];
  return { proc, ports: line.split(' ').map(Number) };
}

async function runUnit(): Promise<void> {
  const sink = net.createServer((s) => s.resume().on('error', () => s.destroy()));
  const echo = net.createServer((s) => s.pipe(s).on('error', () => s.destroy()));
  process.stdout.write(`${await listen(sink, UNIT_ADDRESS)} ${await listen(echo, UNIT_ADDRESS)}\n`);
}

async function runEdge(targets: number[]): Promise<void> {
  const rules = fiftyRules();
  const ports: number[] = [];
  for (const port of targets) {
    const forwarder = await forwardTcp('127.0.0.1', 0, { address: UNIT_ADDRESS, port }, (from, fromPort) =>
      admits(rules, 'tcp', from, fromPort, port),
    );
    ports.push((forwarder.server.address() as net.AddressInfo).port);
  }
  process.stdout.write(`${ports.join(' ')}\n`);
}

export function describeEdge(m: Awaited<ReturnType<typeof measureEdge>>): EdgeReport {
  const ratio = m.forwarded / m.direct;
  const mb = (b: number) => `${(b / 1e6).toFixed(0)} MB/s`;
  const lines = [
    `  TCP throughput through the edge ${mb(m.forwarded)} vs direct ${mb(m.direct)}: ${ratio.toFixed(2)} of direct (floor ${FLOOR}, goal ${GOAL})`,
    `  round trip p50 direct ${(m.latencyDirectMs * 1000).toFixed(0)} µs, through the edge ${(m.latencyForwardedMs * 1000).toFixed(0)} µs: ${((m.latencyForwardedMs - m.latencyDirectMs) * 1000).toFixed(0)} µs added`,
    `  firewall: 50 ingress rules evaluated (none matching) ${m.ruleNs.toFixed(0)} ns per connection, ${(m.ruleNs / Math.max(m.noRuleNs, 1)).toFixed(1)}x an empty ruleset (${m.noRuleNs.toFixed(0)} ns)`,
  ];
  return { lines, missed: ratio < FLOOR ? [`edge throughput ${ratio.toFixed(2)} of direct < ${FLOOR}`] : [] };
}

if (process.argv[2] === '--unit') await runUnit();
else if (process.argv[2] === '--edge') await runEdge(process.argv.slice(3).map(Number));
else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const report = describeEdge(await measureEdge());
  process.stdout.write(`The local edge\n${report.lines.join('\n')}\n`);
  if (report.missed.length > 0) {
    process.stdout.write(`missed: ${report.missed.join('; ')}\n`);
    process.exitCode = 1;
  }
}
