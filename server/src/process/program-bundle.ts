// How node runs one of the platform's TypeScript programs as a process of its own (the edge, the
// gateway, the platform DNS as `npm start`'s children; tests' second API processes): from an esbuild
// bundle of its modules, kept between runs (build-cache.ts), rather than through tsx's loader. tsx
// resolves and compiles several hundred modules one by one in every start: 2.5-3 s of CPU for the API
// on an idle machine, 5-6 s on a loaded one, where the bundle loads as one file. Packages are not
// bundled (node imports them from node_modules as it would); each module keeps its own
// `import.meta.url` (the file it was bundled from), so whatever it finds beside itself it finds the same
// way. Without esbuild, or where the bundle cannot be written, the program runs through tsx as before.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Plugin } from 'esbuild';
import { cachedBuild } from './build-cache.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const CACHE = join(REPO, 'node_modules', '.cache', 'svc-programs');
const LOCKFILE = join(REPO, 'package-lock.json');
const MODULE_URL = '__svcModuleUrl';

/** Our modules keep their own URL: a top-level constant each, which `import.meta.url` is defined as. */
const ownUrls: Plugin = {
  name: 'own-import-meta-url',
  setup(build) {
    build.onLoad({ filter: /\.[cm]?ts$/ }, async ({ path }) => {
      const text = await readFile(path, 'utf8');
      const url = `const ${MODULE_URL} = ${JSON.stringify(pathToFileURL(path).href)};\n`;
      return { contents: text.includes('import.meta') ? url + text : text, loader: 'ts' };
    });
  },
};

// Starts asked for at once (units started side by side) share one look at the cache, and one build.
const pending = new Map<string, Promise<string>>();

/** The bundle's path for the program whose main module is `main` (a .ts path), built when it changed. */
export function programBundle(main: string): Promise<string> {
  let bundle = pending.get(main);
  if (!bundle) {
    bundle = buildOrReuse(main).finally(() => pending.delete(main));
    pending.set(main, bundle);
  }
  return bundle;
}

async function buildOrReuse(main: string): Promise<string> {
  const [file] = await cachedBuild(CACHE, import.meta.url, LOCKFILE, {
    entryPoints: [main],
    absWorkingDir: REPO,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    // Scope hoisting renames each module's constant apart; the define binds to the module's own.
    define: { 'import.meta.url': MODULE_URL },
    plugins: [ownUrls],
    outfile: join(CACHE, 'out.mjs'),
    logLevel: 'error',
  });
  if (!file) throw new Error(`esbuild made no bundle of ${main}`);
  const digest = createHash('sha256').update(file.text).digest('hex').slice(0, 16);
  const name = relative(REPO, main)
    .replace(/^server\/src\//, '')
    .replace(/\.ts$/, '')
    .replace(/\W+/g, '-');
  const path = join(CACHE, `${name}-${digest}.mjs`);
  // Named by its content: a file already there is this bundle (written whole, then renamed into place).
  const there = await stat(path)
    .then((s) => s.size === Buffer.byteLength(file.text))
    .catch(() => false);
  if (!there) {
    const temp = `${path}.${process.pid}.tmp`;
    await mkdir(CACHE, { recursive: true });
    await writeFile(temp, file.text);
    await rename(temp, path);
  }
  return path;
}

const TSX_LOADER = () => pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** node's arguments that run the program `main` (a .ts path or file URL): its bundle, else through tsx. */
export async function programArgs(main: string): Promise<string[]> {
  const path = resolve(REPO, main.startsWith('file:') ? fileURLToPath(main) : main);
  try {
    return [await programBundle(path)];
  } catch {
    return ['--import', TSX_LOADER(), path];
  }
}
