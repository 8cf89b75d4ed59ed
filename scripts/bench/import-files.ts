// An import of many small files (issue 37 "Benchmarks": "an import of 10,000 small files: time and peak
// RSS of the process that runs it"): the copy an import operation runs (connect, the bounded listing,
// the copy through the confined file layer: features/imports/) from OpenSSH's sshd (internal-sftp) on
// loopback into a fresh directory, in a process of its own, as the job worker would run it, so its peak
// RSS (VmHWM) is the import's alone; its RSS once the modules are loaded is shown beside it. Reported
// only. Then the listing's bound: a directory that never ends (test/support/hostile-sftp.ts) read to the
// 100,000-name limit in such a process, its peak RSS. Needs root (the sshd test user, as test/imports does).
//
//   npx tsx scripts/bench/import-files.ts [--files=10000] [--bytes=1024]
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { RemoteGuard } from '../../server/src/features/imports/guard.js';
import { IMPORT_LIMITS } from '../../server/src/features/imports/limits.js';
import { connect, copyTree, readRemoteTree } from '../../server/src/features/imports/transfer.js';
import { VolumeImportTarget } from '../../server/src/substrate/local/files/index.js';
import { startHostileSftp } from '../../test/support/hostile-sftp.js';
import { startOpenSshSftp } from '../../test/support/sftp-server.js';

interface ChildResult {
  ms: number;
  files: number;
  loadedKb: number;
  peakKb: number;
  error?: string;
}

export async function measureImportOfFiles(
  options: { files?: number; bytes?: number } = {},
): Promise<{ lines: string[] }> {
  const files = options.files ?? 10_000;
  const bytes = options.bytes ?? 1024;
  const work = await mkdtemp(join(tmpdir(), 'bench-import-files-'));
  const server = await startOpenSshSftp();
  try {
    // 100 directories of 100 files: a tree, as a site or a game's data is.
    const perDir = 100;
    for (let d = 0; d * perDir < files; d++) {
      await mkdir(join(server.root, `d${d}`));
      for (let i = 0; i < perDir && d * perDir + i < files; i++) {
        await writeFile(join(server.root, `d${d}`, `f${i}.txt`), randomBytes(bytes));
      }
    }
    spawnSync('chown', ['-R', `${server.username}:${server.username}`, server.root]);
    const dest = join(work, 'dest');
    await mkdir(dest);
    const result = await inChild({
      port: server.port,
      username: server.username,
      password: server.password,
      remotePath: server.remotePath,
      dest,
    });
    if (result.files !== files) throw new Error(`copied ${result.files} files of ${files}`);
    const mib = (kb: number) => `${(kb / 1024).toFixed(0)} MiB`;
    // The bound a hostile listing meets (DECISIONS §8): a directory that never ends, read to 100,000 names.
    const peer = await startHostileSftp('endless-listing');
    let hostile: ChildResult;
    try {
      hostile = await inChild({ port: peer.port, username: peer.username, password: peer.password }, '--hostile-child');
    } finally {
      await peer.close();
    }
    return {
      lines: [
        `Import of ${files.toLocaleString('en-US')} files of ${bytes} bytes from OpenSSH sshd, in a process of its own (scripts/bench/import-files.ts)`,
        `  time ${Math.round(result.ms)} ms (${Math.round((files / result.ms) * 1000)} files/s); peak RSS ${mib(result.peakKb)} (${mib(result.loadedKb)} once loaded); load ${loadavg()[0]!.toFixed(2)}`,
        `  a listing that never ends, stopped at the limit in ${Math.round(hostile.ms)} ms: peak RSS ${mib(hostile.peakKb)} (${mib(hostile.loadedKb)} once loaded)`,
        `  (${hostile.error ?? 'no error'})`,
      ],
    };
  } finally {
    await server.close();
    await rm(work, { recursive: true, force: true });
  }
}

function inChild(
  args: { port: number; username: string; password: string; remotePath?: string; dest?: string },
  mode: '--child' | '--hostile-child' = '--child',
) {
  return new Promise<ChildResult>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), mode, String(args.port), args.username, args.remotePath ?? '', args.dest ?? ''],
      // The password by the environment, never on a command line.
      { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, BENCH_SFTP_PASSWORD: args.password } },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) reject(new Error(`bench child exited ${code}`));
      else resolve(JSON.parse(out) as ChildResult);
    });
  });
}

async function memoryKb(field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await readFile('/proc/self/status', 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
}

async function child(port: string, username: string, remotePath: string, dest: string): Promise<void> {
  const loadedKb = await memoryKb('VmRSS');
  const guard = new RemoteGuard({ now: Date.now, stallMs: IMPORT_LIMITS.stallMs, peer: `127.0.0.1:${port}` });
  const t0 = performance.now();
  const remote = await connect(
    { address: '127.0.0.1', port: Number(port), username, password: process.env.BENCH_SFTP_PASSWORD ?? '' },
    guard,
  );
  let copied = 0;
  try {
    const tree = await readRemoteTree(remote.sftp, remotePath, guard);
    await copyTree({
      sftp: remote.sftp,
      tree,
      target: new VolumeImportTarget(dest),
      guard,
      onProgress: (p) => (copied = p.files),
    });
  } finally {
    guard.close();
    remote.close();
  }
  const ms = performance.now() - t0;
  const result: ChildResult = { ms, files: copied, loadedKb, peakKb: await memoryKb('VmHWM') };
  process.stdout.write(JSON.stringify(result));
}

/** A listing that never ends, read by the import's listing in this process until its limit. */
async function hostileChild(port: string, username: string): Promise<void> {
  const loadedKb = await memoryKb('VmRSS');
  const guard = new RemoteGuard({ now: Date.now, stallMs: IMPORT_LIMITS.stallMs, peer: `127.0.0.1:${port}` });
  const t0 = performance.now();
  const remote = await connect(
    { address: '127.0.0.1', port: Number(port), username, password: process.env.BENCH_SFTP_PASSWORD ?? '' },
    guard,
  );
  let error = '';
  try {
    await readRemoteTree(remote.sftp, '/', guard);
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  } finally {
    guard.close();
    remote.close();
  }
  const result: ChildResult = { ms: performance.now() - t0, files: 0, loadedKb, peakKb: await memoryKb('VmHWM'), error };
  process.stdout.write(JSON.stringify(result));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === '--hostile-child') {
    const [port, username] = process.argv.slice(3) as [string, string];
    await hostileChild(port, username);
    process.exit(0);
  }
  if (process.argv[2] === '--child') {
    const [port, username, remotePath, dest] = process.argv.slice(3) as [string, string, string, string];
    await child(port, username, remotePath, dest);
    process.exit(0);
  }
  const { values } = parseArgs({
    options: { files: { type: 'string', default: '10000' }, bytes: { type: 'string', default: '1024' } },
  });
  const report = await measureImportOfFiles({ files: Number(values.files), bytes: Number(values.bytes) });
  console.log(report.lines.join('\n'));
}
