// esbuild's bundles (the unit image's, and the programs the platform starts: program-bundle.ts), kept
// between processes. Making the unit image's (the block game's flying-squid above all) took 1.3 s on an
// idle machine and 5 s on a loaded one, in every process that started the LXD driver, only to find the
// image's digest unchanged. A bundle is kept with every file esbuild read
// for it (its metafile's inputs) and their size and modification time; it is used again while none of
// them changed and the build's options, esbuild's version, the lockfile and the module that asks for it
// (where its plugins' code is) are the same.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, version, type BuildOptions } from 'esbuild';

export interface BuiltFile {
  path: string;
  text: string;
}

interface Kept {
  inputs: Record<string, [number, number]>;
  outputs: BuiltFile[];
}

/**
 * `build(options)`'s output files, from `dir` when nothing they were made of changed. `caller` is the
 * module asking (its `import.meta.url`): its text is part of the key, so an edited plugin builds anew.
 */
export async function cachedBuild(
  dir: string,
  caller: string,
  lockfile: string,
  options: BuildOptions,
): Promise<BuiltFile[]> {
  const cwd = options.absWorkingDir ?? process.cwd();
  const key = createHash('sha256')
    .update(version)
    .update(JSON.stringify(options))
    .update(await readFile(fileURLToPath(caller)))
    .update(await readFile(lockfile).catch(() => Buffer.alloc(0)))
    .digest('hex')
    .slice(0, 32);
  const file = join(dir, `bundle-${key}.json`);
  const kept = await readKept(file);
  if (kept && (await unchanged(cwd, kept.inputs))) return kept.outputs;

  const result = await build({ ...options, write: false, metafile: true });
  const inputs: Kept['inputs'] = {};
  await Promise.all(
    Object.keys(result.metafile.inputs).map(async (input) => {
      // Inputs a plugin made up (`ns:path`) have no file.
      const s = await stat(resolve(cwd, input)).catch(() => null);
      if (s) inputs[input] = [s.size, s.mtimeMs];
    }),
  );
  const outputs = result.outputFiles.map((f) => ({ path: f.path, text: f.text }));
  // A checkout the server may not write to builds every time, as before the cache.
  const temp = `${file}.${process.pid}.tmp`;
  await mkdir(dir, { recursive: true })
    .then(() => writeFile(temp, JSON.stringify({ inputs, outputs } satisfies Kept)))
    .then(() => rename(temp, file))
    .catch(() => undefined);
  return outputs;
}

async function readKept(file: string): Promise<Kept | null> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Kept;
  } catch {
    return null;
  }
}

async function unchanged(cwd: string, inputs: Kept['inputs']): Promise<boolean> {
  const entries = Object.entries(inputs);
  if (entries.length === 0) return false;
  for (let i = 0; i < entries.length; i += 128) {
    const batch = entries.slice(i, i + 128);
    const same = await Promise.all(
      batch.map(async ([input, [size, mtimeMs]]) => {
        const s = await stat(resolve(cwd, input)).catch(() => null);
        return s !== null && s.size === size && s.mtimeMs === mtimeMs;
      }),
    );
    if (same.includes(false)) return false;
  }
  return true;
}
