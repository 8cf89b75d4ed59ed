// The directories bwrap mounts over inside a unit's root (launch.ts). bwrap would make each one on the
// volume at the program's first start, after the agent has said the unit runs; made here, before it
// starts, the unit's files read the same from the moment it exists (a listing, a backup, a refusal's
// "nothing changed") and belong to the unit's root like the rest of them.
import { existsSync } from 'node:fs';
import { lchown, lstat, mkdir, realpath, rmdir } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import type { IdRange } from './idmap.js';
import { RUNTIME_DIR } from './runtime.js';

/** Relative to the unit's root; a machine's own /etc is its own, so only a workload gets the etc/ ones. */
export function mountPoints(kind: 'machine' | 'workload'): string[] {
  return [
    'usr',
    'bin',
    'sbin',
    'lib',
    ...(existsSync('/usr/lib64') ? ['lib64'] : []),
    'proc',
    'dev',
    'tmp',
    RUNTIME_DIR.slice(1),
    ...(kind === 'workload' ? ['etc', 'etc/alternatives', 'etc/ssl'] : ['run']),
  ];
}

/**
 * Makes what is missing, owned by the range's first id; leaves alone whatever the unit put there (a file
 * or a link where a mount point goes makes bwrap refuse to start, which is the unit's own doing). The
 * volume is the customer's (SFTP may rename in it meanwhile): a directory that did not land inside the
 * root is removed again before it is given to anyone.
 */
export async function ensureMountPoints(
  root: string,
  kind: 'machine' | 'workload',
  range: IdRange,
): Promise<void> {
  const top = await lstat(root).catch(() => null);
  if (!top?.isDirectory()) return;
  for (const point of mountPoints(kind)) {
    const path = join(root, point);
    const parent = await lstat(join(path, '..')).catch(() => null);
    if (!parent?.isDirectory()) continue;
    try {
      await mkdir(path, { mode: 0o755 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw err;
    }
    const [real, realRoot] = await Promise.all([realpath(dirname(path)), realpath(root)]);
    const inside = real === realRoot || real.startsWith(realRoot + sep);
    if (!inside) {
      await rmdir(join(real, point.split('/').at(-1)!)).catch(() => undefined);
      continue;
    }
    await lchown(path, range.base, range.base);
  }
}
