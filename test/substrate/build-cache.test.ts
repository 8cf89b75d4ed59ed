// The unit image's bundles kept between processes (lxd/build-cache.ts): used again while every file the
// build read is unchanged, made anew when one changes, and never taken for another build's.
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedBuild } from '../../server/src/process/build-cache.js';

let dir: string;
let cacheDir: string;
let lockfile: string;
const caller = import.meta.url;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-build-cache-'));
  cacheDir = join(dir, 'cache');
  lockfile = join(dir, 'package-lock.json');
  await writeFile(lockfile, '{"lockfileVersion":3}');
  await writeFile(join(dir, 'entry.js'), "import { word } from './word.js';\nconsole.log(word);\n");
  await writeFile(join(dir, 'word.js'), "export const word = 'first';\n");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const options = () => ({
  entryPoints: [join(dir, 'entry.js')],
  outfile: '/opt/out.js',
  bundle: true,
  absWorkingDir: dir,
  logLevel: 'silent' as const,
});

describe('the unit image bundle cache', () => {
  it('keeps a bundle and answers it again while its inputs are unchanged', async () => {
    const [made] = await cachedBuild(cacheDir, caller, lockfile, options());
    expect(made!.text).toContain('"first"');
    expect(await readdir(cacheDir)).toHaveLength(1);
    // What is kept is what is answered: tampering with the kept file shows it was read, not rebuilt.
    const [kept] = await readdir(cacheDir);
    const keptFile = join(cacheDir, kept!);
    const text = (await readFile(keptFile, 'utf8')).replace('first', 'kept!');
    await writeFile(keptFile, text);
    const [again] = await cachedBuild(cacheDir, caller, lockfile, options());
    expect(again!.text).toContain('"kept!"');
  });

  it('builds anew when a file the bundle was made of changes', async () => {
    // Same size: the modification time tells.
    await writeFile(join(dir, 'word.js'), "export const word = 'other';\n");
    const later = new Date(Date.now() + 5000);
    await utimes(join(dir, 'word.js'), later, later);
    const [rebuilt] = await cachedBuild(cacheDir, caller, lockfile, options());
    expect(rebuilt!.text).toContain('"other"');
  });

  it('keeps builds with other options or another lockfile apart', async () => {
    const [minified] = await cachedBuild(cacheDir, caller, lockfile, { ...options(), minify: true });
    expect(minified!.text).not.toContain('\n  ');
    await writeFile(lockfile, '{"lockfileVersion":3,"packages":{}}');
    await cachedBuild(cacheDir, caller, lockfile, options());
    expect((await readdir(cacheDir)).filter((f) => f.endsWith('.json'))).toHaveLength(3);
  });
});
