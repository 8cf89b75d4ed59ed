// The mount points a unit's root gets before its first start (sandbox/mount-points.ts): made inside the
// root, given to the unit's root id, and never through a link the customer planted in the volume.
import { lstat, mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ensureMountPoints, mountPoints } from '../../server/src/substrate/local/sandbox/mount-points.js';

const RANGE = { base: 2 ** 20 + 7 * 65_536, size: 65_536 };
const made: string[] = [];
afterEach(async () => {
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
});
const temp = async (tag: string) => {
  const dir = await mkdtemp(join(tmpdir(), `svc-mount-points-${tag}-`));
  made.push(dir);
  return dir;
};

it.skipIf(process.getuid?.() !== 0)(
  "makes a workload's mount points, owned by its root id, and is idempotent",
  async () => {
    const root = await temp('root');
    await ensureMountPoints(root, 'workload', RANGE);
    await ensureMountPoints(root, 'workload', RANGE);
    for (const point of mountPoints('workload')) {
      const st = await lstat(join(root, point));
      expect(st.isDirectory(), point).toBe(true);
      expect([st.uid, st.gid], point).toEqual([RANGE.base, RANGE.base]);
    }
  },
);

it.skipIf(process.getuid?.() !== 0)(
  'never makes anything through a link planted where a mount point goes',
  async () => {
    const root = await temp('root');
    const host = await temp('host');
    await mkdir(join(host, 'inside'));
    // etc/ leads to the host: nothing may appear there; proc is a link: left as it is.
    await symlink(host, join(root, 'etc'));
    await symlink(join(host, 'inside'), join(root, 'proc'));
    await ensureMountPoints(root, 'workload', RANGE);
    expect((await readdir(host)).sort()).toEqual(['inside']);
    expect(await readdir(join(host, 'inside'))).toEqual([]);
    expect((await lstat(join(root, 'proc'))).isSymbolicLink()).toBe(true);
    expect((await lstat(join(root, 'usr'))).isDirectory()).toBe(true);
  },
);
