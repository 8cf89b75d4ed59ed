// A local volume's size (substrate/local/usage.ts): the blocks of everything under it, nested
// directories included, a link counted as itself and never followed, taken again once forgotten.
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { forgetVolumeSizes, localUnitUsage } from '../../server/src/substrate/local/usage.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'volume-size-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const MiB = 1024 * 1024;
const diskOf = async (volume: string) =>
  (await localUnitUsage('no-such-unit', join(dir, 'unit'), volume)).diskBytes;

it('counts nested files, not what a link points at, and measures again once forgotten', async () => {
  const volume = join(dir, 'volume');
  // More entries than one slice of the walk, so it yields to the loop and goes on.
  await mkdir(join(volume, 'a', 'b', 'c'), { recursive: true });
  for (let i = 0; i < 300; i++) await writeFile(join(volume, 'a', `f${i}`), 'x');
  await writeFile(join(volume, 'a', 'b', 'c', 'big'), Buffer.alloc(2 * MiB, 1));
  await writeFile(join(dir, 'outside'), Buffer.alloc(8 * MiB, 1));
  await symlink(join(dir, 'outside'), join(volume, 'link'));
  await symlink('/usr', join(volume, 'usr'));
  const first = (await diskOf(volume))!;
  expect(first).toBeGreaterThanOrEqual(2 * MiB);
  expect(first).toBeLessThan(6 * MiB);

  await writeFile(join(volume, 'more'), Buffer.alloc(4 * MiB, 1));
  // Cached for a minute...
  expect(await diskOf(volume)).toBe(first);
  forgetVolumeSizes();
  // ...then walked again.
  expect(await diskOf(volume)).toBeGreaterThanOrEqual(first + 4 * MiB);
  // A volume that is not there: unknown, not zero.
  expect(await diskOf(join(dir, 'absent'))).toBeNull();
});
