// The cost of the confined file layer per operation (issue 20: "the cost of the confined file layer per
// operation against a plain fs call (report it)"): read of a small file three directories deep, stat,
// listing of a 100-entry directory and an atomic write, each through VolumeFiles (a descriptor walk with
// O_NOFOLLOW per component, server/src/substrate/local/files) against the plain fs/promises call on the
// same path (readFile, lstat, readdir + lstat of each entry, writeFile of a temp file then rename). Both
// run in this process, interleaved in slices; every figure is the plain call's rate divided by the
// layer's (1.0: free; 0.5: the layer takes twice as long). Reported, never failing; issue 36's goal is
// 0.5 for read and stat. The layer's cost is trips to libuv's thread pool (a stat three directories deep
// was 9 in a row; walk.ts's openVolumeDir makes it 4 rounds), so the figures move with the load.
//
//   npx tsx scripts/bench/files.ts [--ops=2000] [--slices=5]
import { lstat, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { VolumeFiles } from '../../server/src/substrate/local/files/index.js';

export interface FilesReport {
  lines: string[];
}

interface Case {
  name: string;
  plain: () => Promise<unknown>;
  layer: () => Promise<unknown>;
}

export async function measureFiles(options: { ops?: number; slices?: number } = {}): Promise<FilesReport> {
  const ops = options.ops ?? 2000;
  const slices = options.slices ?? 5;
  const volume = await mkdtemp(join(tmpdir(), 'svc-files-bench-'));
  const lines: string[] = [];
  try {
    const deep = join(volume, 'a', 'b', 'c');
    await mkdir(join(volume, 'list'), { recursive: true });
    await mkdir(deep, { recursive: true });
    await writeFile(join(deep, 'server.properties'), 'motd=hello\n'.repeat(200));
    for (let i = 0; i < 100; i++) await writeFile(join(volume, 'list', `f${i}`), 'x');
    const files = new VolumeFiles(volume);
    const content = 'level-name=world\n'.repeat(100);
    const cases: Case[] = [
      {
        name: 'read /a/b/c/server.properties (2.2 kB)',
        plain: () => readFile(join(deep, 'server.properties'), 'utf8'),
        layer: () => files.read('/a/b/c/server.properties'),
      },
      {
        name: 'stat /a/b/c/server.properties',
        plain: () => lstat(join(deep, 'server.properties')),
        layer: () => files.stat('/a/b/c/server.properties'),
      },
      {
        name: 'list a directory of 100 files',
        plain: async () => {
          const dir = join(volume, 'list');
          return Promise.all((await readdir(dir)).map((name) => lstat(join(dir, name))));
        },
        layer: () => files.list('/list'),
      },
      {
        name: 'atomic write /a/b/c/w.txt (1.7 kB)',
        plain: async () => {
          await writeFile(join(deep, '.w.tmp'), content);
          await rename(join(deep, '.w.tmp'), join(deep, 'w.txt'));
        },
        layer: () => files.write('/a/b/c/w.txt', content),
      },
    ];
    for (const c of cases) {
      const rates = { plain: [] as number[], layer: [] as number[] };
      const n = c.name.startsWith('list') ? Math.ceil(ops / 20) : ops;
      for (let slice = 0; slice < slices; slice++) {
        const order = slice % 2 === 0 ? (['plain', 'layer'] as const) : (['layer', 'plain'] as const);
        for (const which of order) {
          const started = performance.now();
          for (let i = 0; i < n; i++) await c[which]();
          rates[which].push(n / ((performance.now() - started) / 1000));
        }
      }
      const plain = median(rates.plain);
      const layer = median(rates.layer);
      lines.push(
        `  ${c.name}: layer ${fmt(layer)}/s, plain fs ${fmt(plain)}/s, ratio ${(layer / plain).toFixed(2)} ` +
          `(${(1e6 / layer - 1e6 / plain) | 0} µs more per operation)` +
          (/^(read|stat) /.test(c.name) ? ' (goal 0.5)' : ''),
      );
    }
    lines.push(`  load average ${loadavg()[0]!.toFixed(2)}`);
  } finally {
    await rm(volume, { recursive: true, force: true });
  }
  return { lines };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { ops: { type: 'string', default: '2000' }, slices: { type: 'string', default: '5' } },
  });
  const report = await measureFiles({ ops: Number(values.ops), slices: Number(values.slices) });
  process.stdout.write(`The confined file layer against plain fs calls\n${report.lines.join('\n')}\n`);
}
