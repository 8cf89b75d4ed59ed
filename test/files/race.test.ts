// A directory of the volume swapped for a link to outside, and back, in a loop by another process, while
// the file layer reads, lists, writes, chmods and deletes through it: whatever the interleaving, nothing
// outside the volume is read, written, re-moded or deleted (checked by the canary), and the swap really
// raced the operations (both outcomes were seen).
import { spawn } from 'node:child_process';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { FileLayerError, VolumeFiles } from '../../server/src/substrate/local/files/index.js';
import { makeSandbox, SECRET, type Sandbox } from './canary.js';

let box: Sandbox;

beforeEach(async () => {
  box = await makeSandbox();
});

afterEach(async () => {
  await box.intact();
  await box.cleanup();
});

// Runs in its own process, so the swaps happen truly alongside the layer's system calls. It never makes
// anything but the link to outside, so its own writes (into a directory it just made) stay inside.
const SWAPPER = `
const fs = require('node:fs'), path = require('node:path');
const [volume, outside, ms] = process.argv.slice(1);
const a = path.join(volume, 'a'), trash = path.join(volume, '.trash');
fs.mkdirSync(trash, { recursive: true });
let swaps = 0;
const end = Date.now() + Number(ms);
const quietly = (f) => { try { f(); } catch {} };
while (Date.now() < end) {
  quietly(() => fs.symlinkSync(outside, a));
  quietly(() => fs.unlinkSync(a));
  quietly(() => fs.renameSync(a, path.join(trash, String(swaps) + 'x')));
  quietly(() => {
    fs.mkdirSync(a);
    fs.writeFileSync(path.join(a, 'f.txt'), 'inside');
    fs.mkdirSync(path.join(a, 'sub'));
    fs.writeFileSync(path.join(a, 'sub', 'g.txt'), 'inside');
  });
  quietly(() => fs.renameSync(a, path.join(trash, String(swaps))));
  swaps++;
}
process.stdout.write(String(swaps));
`;

function swapFor(ms: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', SWAPPER, box.volume, box.outside, String(ms)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(Number(out)) : reject(new Error(`swapper exited ${code}`)),
    );
  });
}

it('a directory swapped for a link in a loop never lets an operation out of the volume', async () => {
  const files = new VolumeFiles(box.volume);
  const outcomes = { ok: 0, refused: 0 };
  const contents = new Set<string>();
  const names = new Set<string>();
  let swapping = true;
  const swapper = swapFor(4000).finally(() => (swapping = false));

  const note = async <T>(promise: Promise<T>): Promise<T | undefined> => {
    try {
      const value = await promise;
      outcomes.ok++;
      return value;
    } catch (err) {
      if (!(err instanceof FileLayerError)) throw err;
      outcomes.refused++;
      return undefined;
    }
  };

  while (swapping) {
    const results = await Promise.all([
      note(files.read('/a/f.txt')),
      note(files.read('/a/secret.txt')),
      note(files.read('/a/sub/g.txt')),
      note(files.read('/a/sub/deep.txt')),
      note(files.list('/a')),
      note(files.list('/a/sub')),
      note(files.write('/a/w.txt', 'planted')),
      note(files.write('/a/sub/w.txt', 'planted')),
      note(files.mkdir('/a/sub/made')),
      note(files.chmod('/a/secret.txt', 0o777)),
      note(files.chmod('/a/sub', 0o777)),
      note(files.remove('/a/secret.txt')),
      note(files.remove('/a/sub', { recursive: true })),
      note(files.remove('/a', { recursive: true })),
      note(files.rename('/a/sub', '/a/moved')),
    ]);
    for (const result of results) {
      if (result && typeof result === 'object' && 'content' in result) contents.add(result.content);
      if (result && typeof result === 'object' && 'entries' in result) {
        for (const entry of result.entries) names.add(entry.name);
      }
    }
  }
  const swaps = await swapper;

  expect([...contents].filter((c) => c.includes(SECRET))).toEqual([]);
  expect(names.has('secret.txt')).toBe(false);
  expect(names.has('deep.txt')).toBe(false);
  // The race was real: the swapper went round many times, and operations both succeeded and met a link.
  expect(swaps).toBeGreaterThan(100);
  expect(outcomes.ok).toBeGreaterThan(0);
  expect(outcomes.refused).toBeGreaterThan(0);
  expect(contents.has('inside')).toBe(true);
});
