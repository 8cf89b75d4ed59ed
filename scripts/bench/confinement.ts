// The cost of confining a unit (issue 37; server/src/substrate/local/sandbox/): the same unit program run
// the way units ran before (a process of the host listening on a loopback address) and confined (bwrap,
// the volume's id range, its own network namespace reached over a veth pair), in interleaved rounds of
// one run. Measured: start time (spawn to the first accepted connection), a TCP stream and HTTP requests
// through the edge's forwarder (server/src/edge/forward-tcp.ts, in a process of its own as the edge
// runs it). Floors: stream and requests at least 0.8 of unconfined. Needs what confinement needs (root,
// bubblewrap, iproute2, iptables); says so and exits 0 elsewhere.
//
//   npx tsx scripts/bench/confinement.ts         (also a section of `npm run bench`)
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { forwardTcp } from '../../server/src/edge/forward-tcp.js';
import { throughput } from './edge.js';
import {
  confinementProblem,
  prepareUnit,
  removeUnitNetwork,
  releaseVolumeIdRange,
  spawnSandboxed,
} from '../../server/src/substrate/local/sandbox/index.js';
import { removeUnitLimits } from '../../server/src/substrate/local/sandbox/limits.js';

const FLOOR = 0.8;
const ROUNDS = 5; // three read 0.71 once inside a full `npm run bench` (0.87-0.98 alone)
const PORTS = { sink: 7001, http: 7002 };
const HOST_ADDRESS = '127.64.0.251';
const UNIT_ADDRESS = '100.127.253.1';
const UNIT_ID = '0b0c0000-0000-4000-8000-00000000be01';

// The unit's program: a sink and a small HTTP server on its address.
const PROGRAM = `
import net from 'node:net';
import http from 'node:http';
const host = process.env.SVC_BIND_ADDRESS;
net.createServer((s) => s.resume().on('error', () => s.destroy())).listen(${PORTS.sink}, host);
http.createServer((req, res) => { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<p>hello</p>'); })
  .listen(${PORTS.http}, host);
`;

export interface ConfinementMeasure {
  startMs: { host: number; confined: number };
  stream: { host: number; confined: number };
  requests: { host: number; confined: number };
}

// autocannon is CommonJS and untyped: the part of it used here.
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: {
  url: string;
  connections: number;
  duration: number;
}) => Promise<{ requests: { average: number } }>;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port }, () => (s.destroy(), resolve(true)));
    s.on('error', () => resolve(false));
  });
}

/** Starts the program one way or the other; answers it and how long it took to accept a connection. */
async function start(volume: string, confined: boolean): Promise<{ stop: () => Promise<void>; ms: number }> {
  const t = performance.now();
  let proc: ChildProcess;
  if (confined) {
    const confinement = await prepareUnit({
      id: UNIT_ID,
      kind: 'workload',
      volumeDir: volume,
      address: UNIT_ADDRESS,
      limits: { cpu: 2, memoryMb: 1024 },
    });
    proc = spawnSandboxed({
      unitId: UNIT_ID,
      root: confinement.root,
      range: confinement.range,
      network: true,
      cgroups: confinement.cgroups,
      command: [process.execPath, '/unit.mjs'],
      env: { PATH: '/usr/bin:/bin', SVC_BIND_ADDRESS: UNIT_ADDRESS },
      stdio: ['ignore', 'inherit', 'inherit'],
    }).child;
  } else {
    proc = spawn(process.execPath, [join(volume, 'unit.mjs')], {
      cwd: volume,
      env: { PATH: '/usr/bin:/bin', SVC_BIND_ADDRESS: HOST_ADDRESS },
      stdio: 'inherit',
    });
  }
  const address = confined ? UNIT_ADDRESS : HOST_ADDRESS;
  while (!(await connects(address, PORTS.http))) await new Promise((r) => setTimeout(r, 5));
  const ms = performance.now() - t;
  return {
    ms,
    stop: async () => {
      proc.kill('SIGKILL');
      if (proc.exitCode === null && proc.signalCode === null) await once(proc, 'exit');
    },
  };
}

async function requests(port: number, seconds: number): Promise<number> {
  const result = await autocannon({ url: `http://127.0.0.1:${port}/`, connections: 10, duration: seconds });
  return result.requests.average;
}

/** The edge's forwarder in a process of its own, to the program's ports at `address`. */
async function edge(address: string): Promise<{ proc: ChildProcess; sink: number; http: number }> {
  const proc = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), '--forwarder', address],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const [line] = (await once(createInterface({ input: proc.stdout! }), 'line')) as [string];
  const [sink, http] = line.split(' ').map(Number) as [number, number];
  return { proc, sink, http };
}

async function runEdge(address: string): Promise<void> {
  const ports: number[] = [];
  for (const port of [PORTS.sink, PORTS.http]) {
    const forwarder = await forwardTcp('127.0.0.1', 0, { address, port }, () => true);
    ports.push((forwarder.server.address() as net.AddressInfo).port);
  }
  process.stdout.write(`${ports.join(' ')}\n`);
}

export function confinementUnavailable(): string | null {
  return confinementProblem();
}

export async function measureConfinement(options: { sliceMs?: number } = {}): Promise<ConfinementMeasure> {
  const sliceMs = options.sliceMs ?? 1500;
  const volume = await mkdtemp(join(tmpdir(), 'svc-bench-unit-'));
  await writeFile(join(volume, 'unit.mjs'), PROGRAM);
  const starts = { host: [] as number[], confined: [] as number[] };
  const streams = { host: [] as number[], confined: [] as number[] };
  const reqs = { host: [] as number[], confined: [] as number[] };
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
      // A B, B A, ...: a burst of load elsewhere hits both alike.
      const order = round % 2 === 0 ? [false, true] : [true, false];
      for (const confined of order) {
        const unit = await start(volume, confined);
        const key = confined ? 'confined' : 'host';
        starts[key].push(unit.ms);
        const forwarder = await edge(confined ? UNIT_ADDRESS : HOST_ADDRESS);
        try {
          streams[key].push(await throughput(forwarder.sink, '127.0.0.1', sliceMs));
          reqs[key].push(await requests(forwarder.http, Math.max(1, Math.round(sliceMs / 1000))));
        } finally {
          forwarder.proc.kill();
          await unit.stop();
        }
      }
    }
  } finally {
    await removeUnitNetwork(UNIT_ID);
    removeUnitLimits(UNIT_ID);
    await releaseVolumeIdRange(volume);
    await rm(volume, { recursive: true, force: true });
  }
  return {
    startMs: { host: median(starts.host), confined: median(starts.confined) },
    stream: { host: median(streams.host), confined: median(streams.confined) },
    requests: { host: median(reqs.host), confined: median(reqs.confined) },
  };
}

export function describeConfinement(m: ConfinementMeasure): { lines: string[]; missed: string[] } {
  const streamRatio = m.stream.confined / m.stream.host;
  const requestRatio = m.requests.confined / m.requests.host;
  const mb = (b: number) => `${(b / 1e6).toFixed(0)} MB/s`;
  const lines = [
    `  start to first connection: confined ${m.startMs.confined.toFixed(0)} ms, unconfined ${m.startMs.host.toFixed(0)} ms (+${(m.startMs.confined - m.startMs.host).toFixed(0)} ms)`,
    `  TCP stream through the edge: confined ${mb(m.stream.confined)}, unconfined ${mb(m.stream.host)}: ${streamRatio.toFixed(2)} (floor ${FLOOR})`,
    `  HTTP requests through the edge: confined ${m.requests.confined.toFixed(0)}/s, unconfined ${m.requests.host.toFixed(0)}/s: ${requestRatio.toFixed(2)} (floor ${FLOOR})`,
  ];
  const missed: string[] = [];
  if (streamRatio < FLOOR) missed.push(`confined TCP stream ${streamRatio.toFixed(2)} < ${FLOOR}`);
  if (requestRatio < FLOOR) missed.push(`confined HTTP requests ${requestRatio.toFixed(2)} < ${FLOOR}`);
  return { lines, missed };
}

if (process.argv[2] === '--forwarder') await runEdge(process.argv[3]!);
else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const problem = confinementUnavailable();
  if (problem) {
    process.stdout.write(`confinement bench skipped: ${problem}\n`);
  } else {
    const report = describeConfinement(await measureConfinement());
    process.stdout.write(`Confinement of a unit\n${report.lines.join('\n')}\n`);
    if (report.missed.length > 0) process.stdout.write(`missed: ${report.missed.join('; ')}\n`);
  }
}
