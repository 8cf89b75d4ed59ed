// The platform's DNS server (issue 23): queries per second answered by the platform's server
// (server/src/dns-server/, zones read from PostgreSQL) against a static dns2 zone holding the same
// records served the same way (dns2's UDP server, answers from a Map), in interleaved slices of one run;
// and the time from a committed change to its first answer (NOTIFY, reload, answer).
//
//   npx tsx scripts/bench/dns.ts         (also a section of `npm run bench`)
//
// Targets: the platform server at least 0.5 of the static zone's rate; a change answered within 100 ms
// at the median (goal). The load comes from a child process (its own core): one UDP socket keeping 64
// questions in flight.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import dgram from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import dns2 from 'dns2';
import { connect } from '../../server/src/db/client.js';
import { startEmbeddedPostgres } from '../../server/src/db/embedded.js';
import { migrate } from '../../server/src/db/migrate.js';
import { startPlatformDns } from '../../server/src/dns-server/server.js';

const { Packet } = dns2;
const FLOOR = 0.5;
const CHANGE_GOAL_MS = 100;
const ZONES = 200;
const IN_FLIGHT = 64;

export interface DnsReport {
  lines: string[];
  missed: string[];
}

/** The questions of the load: each zone's SOA and a name that does not exist in it. */
const questionsOf = (zones: string[]) =>
  zones.flatMap((z) => [
    { name: z, type: 'SOA' },
    { name: `missing.${z}`, type: 'A' },
  ]);

/** Child: sends the questions round robin to 127.0.0.1:port for `ms`, 64 in flight; prints answers counted. */
async function runLoad(port: number, ms: number, zones: string[]): Promise<void> {
  const packets = questionsOf(zones).map((q, i) => {
    const p = new Packet();
    p.header.id = i % 65536;
    p.questions.push({
      name: q.name,
      type: Packet.TYPE[q.type as 'A'],
      class: Packet.CLASS.IN,
    } as unknown as dns2.Packet.Question);
    return p.toBuffer();
  });
  const socket = dgram.createSocket('udp4');
  let next = 0;
  let answered = 0;
  const started = performance.now();
  const send = () => socket.send(packets[next++ % packets.length]!, port, '127.0.0.1');
  await new Promise<void>((resolve) => {
    socket.on('message', () => {
      answered += 1;
      if (performance.now() - started < ms) send();
      else resolve();
    });
    for (let i = 0; i < IN_FLIGHT; i += 1) send();
    // A lost datagram would stall one slot: top the window up now and then.
    const topUp = setInterval(() => {
      if (performance.now() - started >= ms) {
        clearInterval(topUp);
        resolve();
      } else send();
    }, 50);
  });
  process.stdout.write(`${JSON.stringify({ qps: answered / ((performance.now() - started) / 1000) })}\n`);
  socket.close();
}

function load(port: number, ms: number, zones: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        fileURLToPath(import.meta.url),
        '--load',
        String(port),
        String(ms),
        zones.join(','),
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) =>
      code === 0
        ? resolve((JSON.parse(out) as { qps: number }).qps)
        : reject(new Error(`load exited ${code}`)),
    );
  });
}

/** The baseline: dns2's UDP server answering the same SOA, and NXDOMAIN with it, from a Map. */
async function startStatic(zones: string[]): Promise<{ port: number; close(): Promise<void> }> {
  const soa = (zone: string) => ({
    name: zone,
    type: Packet.TYPE.SOA,
    class: Packet.CLASS.IN,
    ttl: 60,
    primary: 'ns1.bench.test',
    admin: 'hostmaster.bench.test',
    serial: 1,
    refresh: 3600,
    retry: 600,
    expiration: 604800,
    minimum: 30,
  });
  const records = new Map(zones.map((z) => [z, soa(z)]));
  const server = dns2.createUDPServer((request, send) => {
    const response = Packet.createResponseFromRequest(request);
    response.header.aa = 1;
    const [q] = request.questions;
    const name = q!.name.toLowerCase();
    const own = records.get(name);
    if (own) response.answers.push(own as unknown as dns2.Packet.Resource);
    else {
      response.header.rcode = 3;
      response.authorities.push(
        records.get(name.slice(name.indexOf('.') + 1)) as unknown as dns2.Packet.Resource,
      );
    }
    void send(response);
  });
  await server.listen(0, '127.0.0.1');
  return { port: server.address().port, close: () => new Promise((r) => server.close(() => r())) };
}

export async function measureDns(options: { sliceMs?: number; slices?: number } = {}): Promise<{
  platformQps: number;
  staticQps: number;
  changeMs: number[];
}> {
  const sliceMs = options.sliceMs ?? 2000;
  const slices = options.slices ?? 4;
  const dir = mkdtempSync(join(tmpdir(), 'bench-dns-'));
  const pg = await startEmbeddedPostgres({ dir: join(dir, 'pg'), persistent: false });
  const sql = connect(pg.url, { max: 3 });
  const zones = Array.from({ length: ZONES }, (_, i) => `zone${i}.bench.test`);
  try {
    await migrate(sql);
    await sql`insert into parent_domains ${sql(zones.map((name) => ({ id: randomUUID(), name, created_at: new Date() })))}`;
    const log = { info: () => {}, warn: () => {} };
    const platform = await startPlatformDns({
      sql,
      host: '127.0.0.1',
      port: 0,
      platformDomain: 'bench.test',
      ingressAddress: '127.0.0.1',
      log,
    });
    const fixed = await startStatic(zones);
    let platformTotal = 0;
    let staticTotal = 0;
    try {
      await load(platform.port, 300, zones); // warm-up, not counted
      await load(fixed.port, 300, zones);
      for (let i = 0; i < slices; i += 1) {
        const order = i % 2 === 0 ? ['p', 's'] : ['s', 'p'];
        for (const which of order) {
          const qps = await load(which === 'p' ? platform.port : fixed.port, sliceMs, zones);
          if (which === 'p') platformTotal += qps;
          else staticTotal += qps;
        }
      }
      // A change's way to an answer: commit, NOTIFY, reload, answer. Asked every millisecond.
      const ask = dns2.UDPClient({
        dns: '127.0.0.1',
        port: platform.port,
        timeout: 1000,
        retryOverTCP: false,
      });
      const changeMs: number[] = [];
      for (let i = 0; i < 20; i += 1) {
        const name = `change${i}.bench.test`;
        const started = performance.now();
        await sql`insert into parent_domains (id, name, created_at) values (${randomUUID()}, ${name}, now())`;
        for (;;) {
          const reply = await ask(name, 'SOA');
          if (reply.answers.length > 0) break;
          if (performance.now() - started > 5000) throw new Error('a change was not answered within 5 s');
          await new Promise((r) => setTimeout(r, 1));
        }
        changeMs.push(performance.now() - started);
      }
      return { platformQps: platformTotal / slices, staticQps: staticTotal / slices, changeMs };
    } finally {
      await platform.stop();
      await fixed.close();
    }
  } finally {
    await sql.end({ timeout: 1 });
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function describeDns(m: Awaited<ReturnType<typeof measureDns>>): DnsReport {
  const ratio = m.platformQps / m.staticQps;
  const sorted = [...m.changeMs].sort((a, b) => a - b);
  const p50 = sorted[Math.floor(sorted.length / 2)]!;
  const max = sorted[sorted.length - 1]!;
  const lines = [
    `  platform DNS ${m.platformQps.toFixed(0)} queries/s vs a static dns2 zone ${m.staticQps.toFixed(0)}/s (${ZONES} zones, SOA and NXDOMAIN): ${ratio.toFixed(2)} of static (floor ${FLOOR})`,
    `  change to answer: p50 ${p50.toFixed(1)} ms, max ${max.toFixed(1)} ms (goal under ${CHANGE_GOAL_MS} ms)`,
  ];
  return { lines, missed: ratio < FLOOR ? [`platform DNS ${ratio.toFixed(2)} of static < ${FLOOR}`] : [] };
}

if (process.argv[2] === '--load') {
  await runLoad(Number(process.argv[3]), Number(process.argv[4]), process.argv[5]!.split(','));
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const report = describeDns(await measureDns());
  process.stdout.write(`${report.lines.join('\n')}\n`);
  if (report.missed.length > 0) process.exitCode = 1;
}
