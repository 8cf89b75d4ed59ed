// The command console's cost (issues 19 and 36): a workload printing as fast as it can, read by one viewer
// through the path the platform runs (the agent's console hub, agent/console.ts, reached over its socket as
// the gateway reaches it, substrate/local/console.ts, and bridged to a real `ws` WebSocket by the gateway's
// bridge, gateway/console-bridge.ts), and the keystroke round trip (a line typed into the viewer's socket,
// echoed by `cat` in the workload, back on the socket). Tickets and the database are left out: they are
// paid once per socket, not per byte.
//
// The baseline is the same printer's output read over OpenSSH on loopback, `ssh -T -p PORT 127.0.0.1
// 'cat FIFO'` to an sshd this bench starts with its own host key, config and authorized key
// (scripts/bench/openssh.ts), default cipher (chacha20-poly1305 on OpenSSH 9.2): it is what a customer
// uses to watch a program's output without a platform, one network hop with a server and a client process,
// as the console has. The printer writes into a FIFO that the remote `cat` reads, so the producer is the
// one the console carries. The gateway speaks plain HTTP (TLS, where a deployment has it, is ended in front
// of it), so this path has no cipher and ssh's does: that is part of what the customer's alternative costs.
// A bare pipe from the printer is reported beside them (the printer's own pace, what no path can beat).
// While a baseline is measured the unit's printer is stopped (SIGSTOP), so it takes no CPU from it.
// Slices of each alternate (odd slices measure the console last); medians of SLICES.
//
//   npx tsx scripts/bench/console.ts      (also a section of `npm run bench`; needs root for sshd)
//
// Targets: throughput at least 0.8 of OpenSSH's (goal 1.0); p99 round trip under 5 ms more than a pipe's,
// also reported against ssh's. Exits 1 when one is missed. The printer's hub (the agent's part) and the
// bridge (the gateway's part) run in processes of their own, as in the platform. History against the
// earlier baseline (a bare pipe): 0.21 of it at first; profiled (BENCH_CPU_PROF=DIR), the agent's largest
// cost was copying every byte into the scrollback ring, the gateway's the TCP writes to the viewer, the
// viewer's ws reassembling frames; the scrollback now keeps the chunks themselves, the hub corks each
// viewer's socket for one event-loop turn and the bridge sends a turn's reads as one frame (0.31 of a pipe
// at load ~15).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { createServer } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import WebSocket, { WebSocketServer } from 'ws';
import { startConsoleHub } from '../../server/src/agent/console.js';
import { superviseWorkload } from '../../server/src/agent/workload.js';
import { bridgeConsole } from '../../server/src/gateway/console-bridge.js';
import { openConsole } from '../../server/src/substrate/local/console.js';
import { startOpenSsh, type OpenSsh } from './openssh.js';

const FLOOR = 0.8;
const GOAL = 1.0;
const ADDED_RTT_P99_MS = 5;
const SLICE_MS = 1_500;
const SLICES = 5;
const ROUND_TRIPS = 300;
/** A program writing 64 KiB chunks to stdout as fast as the reader takes them. */
const PRINTER = [
  process.execPath,
  '-e',
  "const b=Buffer.alloc(65536,120);const w=()=>{while(process.stdout.write(b));};process.stdout.on('drain',w);w();",
];
const ECHO = ['/bin/cat'];
const quietLog = { info: () => undefined, warn: () => undefined };

export interface ConsoleReport {
  lines: string[];
  missed: string[];
}

/** Runs `role` of this file in a process of its own (as the agent and the gateway run), once it says ready. */
export async function peer(
  role: string[],
  flags: string[] = [],
): Promise<{ line: string; close(): Promise<void> }> {
  // BENCH_CPU_PROF=DIR: each peer writes a V8 CPU profile there as it exits (where the time goes).
  const profile = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF]
    : [];
  const child = spawn(
    process.execPath,
    [...flags, ...profile, '--import', 'tsx', fileURLToPath(import.meta.url), ...role],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  return {
    line,
    async close() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A unit directory whose hub holds `command`'s stdin/stdout, as the agent holds a workload's. */
export async function startUnit(command: string[]): Promise<{ dir: string; close(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-console-'));
  const unit = await peer(['unit', dir, ...command]);
  return {
    dir,
    async close() {
      await unit.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The gateway's part in a process of its own; with `--expose-gc`, so its memory can be read after a GC. */
export async function startBridge(unitDir: string): Promise<{ url: string; close(): Promise<void> }> {
  const bridge = await peer(['bridge', unitDir], ['--expose-gc']);
  return { url: bridge.line, close: () => bridge.close() };
}

/** The agent's part: the hub and the supervised program, until SIGTERM. */
async function runUnit(dir: string, command: string[]): Promise<void> {
  const hub = await startConsoleHub(dir);
  const workload = superviseWorkload({
    command,
    cwd: dir,
    env: () => ({ PATH: process.env.PATH }),
    pidFile: join(dir, 'workload.pid'),
    log: quietLog,
    console: hub,
  });
  process.once(
    'SIGTERM',
    () =>
      void workload
        .stop()
        .then(() => hub.close())
        .finally(() => process.exit(0)),
  );
  process.stdout.write('ready\n');
}

/** The gateway's part: as the gateway, it opens the console before the upgrade completes. */
async function runBridge(unitDir: string): Promise<void> {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  // GET /memory: the process's memory after a full GC (the viewers bench, console-viewers.ts).
  const server = createServer((req, res) => {
    if (req.url !== '/memory') return void res.writeHead(404).end();
    (globalThis as { gc?: () => void }).gc?.();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(process.memoryUsage()));
  });
  server.on('upgrade', (req, socket, head) => {
    void openConsole(unitDir).then((stream) => {
      if (!stream) return socket.destroy();
      wss.handleUpgrade(req, socket, head, (ws) => bridgeConsole(ws, stream));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  process.once('SIGTERM', () => process.exit(0));
  process.stdout.write(`ws://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
}

/** Bytes per second a viewer receives over `ms`, after the first message (the scrollback). */
async function viaGateway(url: string, ms: number): Promise<number> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await once(ws, 'open');
  const rate = await rateOf(ws, 'message', ms);
  ws.terminate();
  return rate;
}

/** Bytes per second `source` emits on `event` over `ms`, counted from its first chunk. */
async function rateOf(source: NodeJS.EventEmitter, event: string, ms: number): Promise<number> {
  let bytes = 0;
  let started = 0;
  source.on(event, (chunk: Buffer) => {
    if (started === 0) started = performance.now();
    else bytes += chunk.length;
  });
  while (started === 0 || performance.now() - started < ms) await new Promise((r) => setTimeout(r, 20));
  return bytes / ((performance.now() - started) / 1000);
}

/** Bytes per second read from the same program's stdout over a pipe. */
async function direct(ms: number): Promise<number> {
  const child = spawn(PRINTER[0]!, PRINTER.slice(1), { stdio: ['ignore', 'pipe', 'ignore'] });
  const rate = await rateOf(child.stdout, 'data', ms);
  child.kill('SIGKILL');
  await once(child, 'exit');
  return rate;
}

/**
 * Bytes per second of the same program's output read over OpenSSH: the printer writes into a FIFO that
 * `ssh … 'cat FIFO'` reads, so the producer is the one the console carries and only the path differs.
 */
async function viaSsh(ssh: OpenSsh, fifo: string, ms: number): Promise<number> {
  const reader = ssh.run(`cat ${fifo}`);
  reader.stdin!.end();
  // The shell's open of the FIFO waits for cat's, so the printer starts once the session is up.
  const printer = spawn('sh', ['-c', 'exec "$@" > "$0"', fifo, ...PRINTER], { stdio: 'ignore' });
  const rate = await rateOf(reader.stdout!, 'data', ms);
  for (const child of [reader, printer]) {
    const exited = child.exitCode === null ? once(child, 'exit') : null;
    child.kill('SIGKILL');
    await exited;
  }
  return rate;
}

/** Stops or resumes the unit's printer, so that it takes no CPU while a baseline is measured. */
async function holdPrinter(unitDir: string, signal: 'SIGSTOP' | 'SIGCONT'): Promise<void> {
  const { pid } = JSON.parse(await readFile(join(unitDir, 'workload.pid'), 'utf8')) as { pid: number };
  process.kill(pid, signal);
}

/** Round trips (ms) of one typed line echoed back, `send` then wait for `reply`. */
async function roundTrips(send: (b: Buffer) => void, replies: AsyncIterable<Buffer>): Promise<number[]> {
  const times: number[] = [];
  const iterator = replies[Symbol.asyncIterator]();
  for (let i = 0; i < ROUND_TRIPS; i += 1) {
    const t = performance.now();
    send(Buffer.from(`k${i}\n`));
    await iterator.next();
    times.push(performance.now() - t);
  }
  return times;
}

function messages(ws: WebSocket): AsyncIterable<Buffer> {
  const queue: Buffer[] = [];
  let wake: (() => void) | null = null;
  ws.on('message', (data: Buffer) => {
    queue.push(data);
    wake?.();
  });
  return {
    async *[Symbol.asyncIterator]() {
      for (;;) {
        while (queue.length === 0) await new Promise<void>((r) => (wake = r));
        yield queue.shift()!;
      }
    },
  };
}

const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)]!;
const mib = (bps: number) => (bps / 1024 / 1024).toFixed(0);

export interface ConsoleMeasures {
  gateway: number;
  ssh: number;
  direct: number;
  rttGateway: number[];
  rttSsh: number[];
  rttDirect: number[];
}

export async function measureConsole(): Promise<ConsoleMeasures> {
  const sshDir = await mkdtemp(join(tmpdir(), 'svc-bench-console-ssh-'));
  try {
    const ssh = await startOpenSsh(sshDir);
    try {
      return await measureWith(ssh, sshDir);
    } finally {
      await ssh.close();
    }
  } finally {
    await rm(sshDir, { recursive: true, force: true });
  }
}

async function measureWith(ssh: OpenSsh, sshDir: string): Promise<ConsoleMeasures> {
  const fifo = join(sshDir, 'printer.fifo');
  const printer = await startUnit(PRINTER);
  const bridge = await startBridge(printer.dir);
  const rates = { gateway: [] as number[], ssh: [] as number[], direct: [] as number[] };
  try {
    await new Promise<void>((resolve, reject) =>
      spawn('mkfifo', [fifo])
        .once('error', reject)
        .once('close', () => resolve()),
    );
    const gatewaySlice = async () => {
      await holdPrinter(printer.dir, 'SIGCONT');
      rates.gateway.push(await viaGateway(bridge.url, SLICE_MS));
      await holdPrinter(printer.dir, 'SIGSTOP');
    };
    await holdPrinter(printer.dir, 'SIGSTOP');
    for (let i = 0; i < SLICES; i += 1) {
      // Odd slices measure the console last: neither path always follows the same one.
      if (i % 2 === 0) await gatewaySlice();
      rates.ssh.push(await viaSsh(ssh, fifo, SLICE_MS));
      rates.direct.push(await direct(SLICE_MS));
      if (i % 2 === 1) await gatewaySlice();
    }
    await holdPrinter(printer.dir, 'SIGCONT');
  } finally {
    await bridge.close();
    await printer.close();
  }

  const echo = await startUnit(ECHO);
  const echoBridge = await startBridge(echo.dir);
  let rttGateway: number[];
  let rttSsh: number[];
  let rttDirect: number[];
  try {
    const ws = new WebSocket(echoBridge.url, { perMessageDeflate: false });
    await once(ws, 'open');
    rttGateway = await roundTrips((b) => ws.send(b), messages(ws));
    ws.terminate();
    const remote = ssh.run(ECHO[0]!);
    rttSsh = await roundTrips((b) => remote.stdin!.write(b), remote.stdout!);
    remote.kill('SIGKILL');
    const cat = spawn(ECHO[0]!, [], { stdio: ['pipe', 'pipe', 'ignore'] });
    rttDirect = await roundTrips((b) => cat.stdin.write(b), cat.stdout);
    cat.kill('SIGKILL');
  } finally {
    await echoBridge.close();
    await echo.close();
  }
  const median = (xs: number[]) => percentile(xs, 0.5);
  return {
    gateway: median(rates.gateway),
    ssh: median(rates.ssh),
    direct: median(rates.direct),
    rttGateway,
    rttSsh,
    rttDirect,
  };
}

/** Wings' default console throttle: 2000 lines per 100 ms; at 100 bytes a line, in bytes per second. */
const WINGS_BYTES_PER_SECOND = (2000 / 0.1) * 100;

export function describeConsole(m: ConsoleMeasures): ConsoleReport {
  const missed: string[] = [];
  const ratio = m.gateway / m.ssh;
  const p99 = (xs: number[]) => percentile(xs, 0.99);
  const rtt = (xs: number[]) => `p50 ${percentile(xs, 0.5).toFixed(2)} ms / p99 ${p99(xs).toFixed(2)} ms`;
  const added = p99(m.rttGateway) - p99(m.rttDirect);
  const addedOverSsh = p99(m.rttGateway) - p99(m.rttSsh);
  if (ratio < FLOOR) missed.push(`console throughput ${ratio.toFixed(2)} of OpenSSH (floor ${FLOOR})`);
  if (added > ADDED_RTT_P99_MS)
    missed.push(`console keystroke p99 added ${added.toFixed(2)} ms (target ${ADDED_RTT_P99_MS})`);
  const verdict = ratio >= GOAL ? 'goal met' : ratio >= FLOOR ? `floor met, goal ${GOAL}` : 'MISSED';
  return {
    lines: [
      `  throughput: ${mib(m.gateway)} MiB/s to one viewer through hub and bridge, ${mib(m.ssh)} MiB/s read over OpenSSH on loopback: ${ratio.toFixed(2)} of OpenSSH (floor ${FLOOR}, goal ${GOAL}: ${verdict}); the printer over a bare pipe ${mib(m.direct)} MiB/s`,
      `  what a viewer can draw is far less: Wings passes 2000 lines per 100 ms by default, ${(WINGS_BYTES_PER_SECOND / 1024 / 1024).toFixed(1)} MiB/s of 100-byte lines; the console carries ${(m.gateway / WINGS_BYTES_PER_SECOND).toFixed(0)}x that`,
      `  keystroke round trip: ${rtt(m.rttGateway)} through the console, ${rtt(m.rttSsh)} over OpenSSH, ${rtt(m.rttDirect)} over a pipe: p99 added ${added.toFixed(2)} ms to the pipe's (target < ${ADDED_RTT_P99_MS}), ${addedOverSsh.toFixed(2)} ms to OpenSSH's`,
    ],
    missed,
  };
}

const [role, ...rest] = process.argv.slice(2);
if (process.argv[1] === fileURLToPath(import.meta.url) && role === 'unit')
  await runUnit(rest[0]!, rest.slice(1));
else if (process.argv[1] === fileURLToPath(import.meta.url) && role === 'bridge') await runBridge(rest[0]!);
else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const report = describeConsole(await measureConsole());
  process.stdout.write(
    `${report.lines.join('\n')}\n${report.missed.length ? `MISSED: ${report.missed.join('; ')}` : 'all targets met'}\n`,
  );
  process.exit(report.missed.length ? 1 : 0);
}
