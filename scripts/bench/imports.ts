// Import throughput (issue 20: "import of 1000 small files and one 256 MiB file against OpenSSH `sftp`
// doing the same copy (goal >= 0.5)"): the copy an import operation runs (features/imports/transfer.ts:
// ssh2's client, the remote tree read, every file written through the confined file layer) against
// OpenSSH's own `sftp` client running `get -r` of the same tree, both from the same OpenSSH sshd
// (internal-sftp) on loopback, into fresh directories. The cases alternate (A B, B A, ...) so load
// elsewhere hits both; the figure is OpenSSH's time divided by ours (1.0: as fast). Needs root (the sshd
// test user, as test/imports does).
//
//   npx tsx scripts/bench/imports.ts [--slices=2] [--small=1000] [--big-mib=256]
import { spawnSync } from 'node:child_process';
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
import { startOpenSshSftp } from '../../test/support/sftp-server.js';

export const TARGET_IMPORT_VS_SFTP = 0.5;

export interface ImportsReport {
  lines: string[];
  ratio: number;
}

export async function measureImports(
  options: { slices?: number; small?: number; bigMib?: number } = {},
): Promise<ImportsReport> {
  const slices = options.slices ?? 2;
  const small = options.small ?? 1000;
  const bigMib = options.bigMib ?? 256;
  const work = await mkdtemp(join(tmpdir(), 'bench-imports-'));
  const key = join(work, 'id_ed25519');
  spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
  const server = await startOpenSshSftp({ authorizedKey: (await readFile(`${key}.pub`, 'utf8')).trim() });
  try {
    await mkdir(join(server.root, 'small'));
    for (let i = 0; i < small; i++) await writeFile(join(server.root, 'small', `f${i}.txt`), randomBytes(4096));
    const big = join(server.root, 'big.bin');
    const chunk = randomBytes(1024 * 1024);
    await writeFile(big, '');
    for (let i = 0; i < bigMib; i++) await writeFile(big, chunk, { flag: 'a' });
    spawnSync('chown', ['-R', `${server.username}:${server.username}`, server.root]);

    const ours = async (dest: string) => {
      const guard = new RemoteGuard({ now: Date.now, stallMs: IMPORT_LIMITS.stallMs, peer: 'bench' });
      const remote = await connect(
        { address: '127.0.0.1', port: server.port, username: server.username, password: server.password },
        guard,
      );
      try {
        const tree = await readRemoteTree(remote.sftp, server.remotePath, guard);
        await copyTree({ sftp: remote.sftp, tree, target: new VolumeImportTarget(dest), guard, onProgress: () => undefined });
      } finally {
        guard.close();
        remote.close();
      }
    };
    const openssh = async (dest: string) => {
      const batch = join(work, 'batch');
      await writeFile(batch, `get -pr ${server.remotePath}/. ${dest}\n`);
      const run = spawnSync(
        'sftp',
        ['-q', '-b', batch, '-i', key, '-P', String(server.port), '-o', 'StrictHostKeyChecking=no',
          '-o', `UserKnownHostsFile=${join(work, 'known_hosts')}`, `${server.username}@127.0.0.1`],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      if (run.status !== 0) throw new Error(`sftp failed: ${run.stderr.toString()}`);
    };
    const times = { ours: [] as number[], openssh: [] as number[] };
    for (let s = 0; s < slices; s++) {
      const order = s % 2 === 0 ? (['ours', 'openssh'] as const) : (['openssh', 'ours'] as const);
      for (const name of order) {
        const dest = join(work, `dest-${name}-${s}`);
        await mkdir(dest);
        const t0 = performance.now();
        await (name === 'ours' ? ours(dest) : openssh(dest));
        times[name].push(performance.now() - t0);
        await rm(dest, { recursive: true, force: true });
      }
    }
    const total = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    const ratio = total(times.openssh) / total(times.ours);
    const ms = (xs: number[]) => xs.map((x) => `${Math.round(x)} ms`).join(', ');
    return {
      ratio,
      lines: [
        `Import of ${small} files of 4 KiB and one ${bigMib} MiB file from OpenSSH sshd (scripts/bench/imports.ts)`,
        `  import copy (ssh2 client, file layer): ${ms(times.ours)}`,
        `  OpenSSH sftp get -pr:                  ${ms(times.openssh)}`,
        `  ratio (sftp time / import time): ${ratio.toFixed(2)} (goal >= ${TARGET_IMPORT_VS_SFTP}); load ${loadavg()[0]!.toFixed(2)}`,
      ],
    };
  } finally {
    await server.close();
    await rm(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      slices: { type: 'string', default: '2' },
      small: { type: 'string', default: '1000' },
      'big-mib': { type: 'string', default: '256' },
    },
  });
  const report = await measureImports({
    slices: Number(values.slices),
    small: Number(values.small),
    bigMib: Number(values['big-mib']),
  });
  console.log(report.lines.join('\n'));
  process.exit(report.ratio >= TARGET_IMPORT_VS_SFTP ? 0 : 1);
}
