// Backup and restore throughput of the local substrate, and the memory a backup takes. The issue: "backup
// and restore throughput of a 256 MiB volume of mixed files, as a ratio to `tar` of the same tree piped to
// /dev/null in the same run (floor 0.5, goal 0.8), and peak RSS of the server during a backup (goal: flat
// in the volume size, streamed)."
//
// - The volume: --mib MiB of mixed files (a third random bytes, a third text, a third sparse-ish binary,
//   from a few hundred bytes to a few MiB each) in nested directories, made once.
// - The baseline: GNU tar of the same tree into a pipe that is drained and dropped (what "piped to
//   /dev/null" reads: tar reads every byte; with -f /dev/null GNU tar would skip reading file data).
// - A backup is the driver's createSnapshot (tar | zstd, SHA-256 and the file written by the process that
//   calls it) and a restore its restoreSnapshot (the archive verified while it is unpacked beside the
//   volume, then swapped in), each run in a fresh process as the server's job worker runs them, timed
//   inside it. Baseline, backup and restore are interleaved, median of --samples; the ratio is the
//   volume's bytes per second of each to the baseline's.
// - Memory: the peak resident set (VmHWM) of that process during a backup, less what it held before the
//   backup began, for a volume of --mib and one of a quarter of it: flat means streamed.
//
//   npx tsx scripts/bench/backups.ts [--no-fail] [--mib=256] [--samples=3]
//
// `npm run bench` runs it last (not with --quick; --skip-backups leaves it out). Exits 1 when a floor is
// missed (unless --no-fail).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createLocalDriver } from '../../server/src/substrate/local/driver.js';

const FLOOR = 0.5;
const GOAL = 0.8;
const MIB = 1024 * 1024;

export interface BackupReport {
  lines: string[];
  missed: string[];
  goalsMissed: string[];
}

/** Writes `mib` MiB of mixed files under `dir`. */
async function makeVolume(dir: string, mib: number): Promise<void> {
  let total = 0;
  const words = 'lorem ipsum dolor sit amet server config player world chunk region level'.split(' ');
  for (let i = 0; total < mib * MIB; i += 1) {
    const sub = join(dir, `d${i % 23}`, `s${i % 5}`);
    await mkdir(sub, { recursive: true });
    let data: Buffer;
    switch (i % 3) {
      case 0:
        data = randomBytes(100_000 + ((i * 7919) % 2_000_000));
        break;
      case 1: {
        const n = 500 + ((i * 104_729) % 200_000);
        const parts: string[] = [];
        for (let w = 0, len = 0; len < n; w += 1) {
          const word = words[(i + w * 31) % words.length]!;
          parts.push(word);
          len += word.length + 1;
        }
        data = Buffer.from(parts.join(' '));
        break;
      }
      default: {
        const block = Buffer.concat([Buffer.alloc(1000), randomBytes(100)]);
        data = Buffer.concat(Array.from({ length: 200 + ((i * 31) % 3000) }, () => block));
      }
    }
    await writeFile(join(sub, `f${i}.dat`), data);
    total += data.length;
  }
}

/** GNU tar of the tree into a drained pipe; answers milliseconds. */
function tarBaseline(volume: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const tar = spawn('tar', ['--create', '--file=-', `--directory=${volume}`, '--numeric-owner', '.'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    tar.stdout.resume();
    tar.once('error', reject);
    tar.once('close', (code) =>
      code === 0 ? resolve(performance.now() - started) : reject(new Error(`tar exited ${code}`)),
    );
  });
}

interface ChildResult {
  ms: number;
  /** kB, VmHWM at the end and VmRSS right before the work. */
  peakKb: number;
  beforeKb: number;
}

/** Runs one snapshot call in a fresh process, as the job worker would; answers its timing and memory. */
function inChild(
  action: 'create' | 'restore',
  dataDir: string,
  volumeId: string,
  snapshotId: string,
  expected?: string,
): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        fileURLToPath(import.meta.url),
        '--child',
        action,
        dataDir,
        volumeId,
        snapshotId,
        expected ?? '',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) reject(new Error(`bench child ${action} exited ${code}`));
      else resolve(JSON.parse(out) as ChildResult);
    });
  });
}

async function memoryKb(field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await readFile('/proc/self/status', 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
}

async function child(
  action: string,
  dataDir: string,
  volumeId: string,
  snapshotId: string,
  expected: string,
) {
  const driver = createLocalDriver({ dataDir });
  const beforeKb = await memoryKb('VmRSS');
  const started = performance.now();
  let info: unknown = null;
  if (action === 'create') info = await driver.createSnapshot({ id: snapshotId, volumeId });
  else await driver.restoreSnapshot({ id: snapshotId, volumeId }, JSON.parse(expected) as never);
  const ms = performance.now() - started;
  process.stdout.write(JSON.stringify({ ms, beforeKb, peakKb: await memoryKb('VmHWM'), info }));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (n: number, digits = 2) => n.toFixed(digits);

export async function measureBackups(
  options: { mib?: number; samples?: number } = {},
): Promise<BackupReport> {
  const mib = options.mib ?? 256;
  const samples = options.samples ?? 3;
  const dataDir = await mkdtemp(join(tmpdir(), 'svc-bench-backups-'));
  const lines: string[] = [];
  const missed: string[] = [];
  const goalsMissed: string[] = [];
  try {
    const driver = createLocalDriver({ dataDir });
    await driver.ensureVolume({ id: 'big', sizeGb: 1 });
    await driver.ensureVolume({ id: 'small', sizeGb: 1 });
    await makeVolume(join(dataDir, 'volumes', 'big'), mib);
    await makeVolume(join(dataDir, 'volumes', 'small'), Math.max(1, Math.round(mib / 4)));
    const volume = join(dataDir, 'volumes', 'big');
    await tarBaseline(volume); // warms the page cache for every case alike
    const tar: number[] = [];
    const create: ChildResult[] = [];
    const restore: ChildResult[] = [];
    for (let i = 0; i < samples; i += 1) {
      tar.push(await tarBaseline(volume));
      const made = await inChild('create', dataDir, 'big', `s${i}`);
      create.push(made);
      const info = (made as ChildResult & { info: unknown }).info;
      restore.push(await inChild('restore', dataDir, 'big', `s${i}`, JSON.stringify(info)));
      await driver.deleteSnapshot({ id: `s${i}`, volumeId: 'big' });
    }
    const small = await inChild('create', dataDir, 'small', 'small');
    const bytes = mib * MIB;
    const base = median(tar);
    const backupMs = median(create.map((c) => c.ms));
    const restoreMs = median(restore.map((c) => c.ms));
    const rate = (ms: number) => `${fmt(bytes / MIB / (ms / 1000), 0)} MiB/s`;
    const backupRatio = base / backupMs;
    const restoreRatio = base / restoreMs;
    lines.push(
      `  volume ${mib} MiB of mixed files; tar piped and dropped (baseline) ${fmt(base, 0)} ms (${rate(base)})`,
    );
    for (const [what, ms, ratio] of [
      ['backup (tar | zstd -1, SHA-256, synced, renamed)', backupMs, backupRatio],
      ['restore (verified while unpacked beside, swapped in)', restoreMs, restoreRatio],
    ] as const) {
      const verdict =
        ratio >= GOAL ? 'goal met' : ratio >= FLOOR ? `floor met, goal ${GOAL}` : `MISSED floor ${FLOOR}`;
      lines.push(`  ${what}: ${fmt(ms, 0)} ms (${rate(ms)}), ratio to baseline ${fmt(ratio)} (${verdict})`);
      if (ratio < FLOOR) missed.push(`${what.split(' ')[0]} throughput ratio ${fmt(ratio)} < ${FLOOR}`);
      else if (ratio < GOAL)
        goalsMissed.push(`${what.split(' ')[0]} throughput ratio ${fmt(ratio)} < ${GOAL}`);
    }
    const grown = (c: ChildResult) => Math.max(0, c.peakKb - c.beforeKb) / 1024;
    const bigGrowth = median(create.map(grown));
    lines.push(
      `  peak RSS of the process taking the backup: ${fmt(median(create.map((c) => c.peakKb)) / 1024, 0)} MiB, ` +
        `${fmt(bigGrowth, 1)} MiB more than before it for ${mib} MiB, ${fmt(grown(small), 1)} MiB for ${Math.round(mib / 4)} MiB (flat: streamed)`,
    );
    if (bigGrowth > grown(small) + 16) goalsMissed.push('backup memory grows with the volume');
    lines.push(`  load average ${fmt(loadavg()[0]!)}`);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
  return { lines, missed, goalsMissed };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === '--child') {
    const [action, dataDir, volumeId, snapshotId, expected] = process.argv.slice(3) as string[];
    await child(action!, dataDir!, volumeId!, snapshotId!, expected ?? '');
  } else {
    const { values } = parseArgs({
      options: {
        'no-fail': { type: 'boolean', default: false },
        mib: { type: 'string', default: '256' },
        samples: { type: 'string', default: '3' },
      },
    });
    const report = await measureBackups({ mib: Number(values.mib), samples: Number(values.samples) });
    process.stdout.write(`Backup and restore on the local substrate\n${report.lines.join('\n')}\n`);
    if (report.goalsMissed.length) process.stdout.write(`goals not met: ${report.goalsMissed.join('; ')}\n`);
    if (report.missed.length) process.stdout.write(`MISSED: ${report.missed.join('; ')}\n`);
    process.exit(report.missed.length > 0 && !values['no-fail'] ? 1 : 0);
  }
}
