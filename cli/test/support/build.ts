// The CLI tests run the built binary, as users do. Builds the SDK and svcctl when their sources are
// newer than their output; a lock directory keeps parallel test files from building at once.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
export const CLI_BIN = join(REPO, 'cli/dist/svcctl.cjs');

const LOCK = join(REPO, '.tmp', 'cli-test-build.lock');
const LOCK_STALE_MS = 180_000;

export function ensureBuilt(): void {
  withLock(() => {
    const sdkOut = join(REPO, 'sdk/dist/index.js');
    if (
      existsSync(join(REPO, 'sdk/tsconfig.build.json')) &&
      isStale(sdkOut, ['sdk/src', 'sdk/package.json', 'sdk/tsconfig.build.json'])
    ) {
      // The SDK's own build script when it has one: it also copies the generated .d.ts files.
      const script = join(REPO, 'sdk/scripts/build.mjs');
      run(existsSync(script) ? [script] : [tsc(), '-p', join(REPO, 'sdk/tsconfig.build.json')]);
    }
    if (
      isStale(CLI_BIN, [
        'cli/src',
        'cli/package.json',
        'cli/tsconfig.build.json',
        'cli/tsconfig.json',
        'cli/scripts/build.mjs',
        // The bin bundles the SDK's build.
        'sdk/dist',
      ])
    ) {
      // The CLI's build script: tsc, then the bundle (dist/svcctl.cjs).
      run([join(REPO, 'cli/scripts/build.mjs')]);
    }
  });
}

/** For unit tests of modules that import the SDK: svcctl resolves it to its built dist/. */
export function ensureSdkBuilt(): void {
  withLock(buildSdkIfStale);
}

function buildSdkIfStale(): void {
  const sdkOut = join(REPO, 'sdk/dist/index.js');
  if (!existsSync(join(REPO, 'sdk/tsconfig.build.json'))) return;
  if (!isStale(sdkOut, ['sdk/src', 'sdk/package.json', 'sdk/tsconfig.build.json'])) return;
  // The SDK's own build script when it has one: it also copies the generated .d.ts files.
  const script = join(REPO, 'sdk/scripts/build.mjs');
  run(existsSync(script) ? [script] : [tsc(), '-p', join(REPO, 'sdk/tsconfig.build.json')]);
}

function tsc(): string {
  return createRequire(import.meta.url).resolve('typescript/bin/tsc');
}

function run(args: string[]): void {
  const result = spawnSync(process.execPath, args, { cwd: REPO, encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(`build failed: node ${args.join(' ')}\n${result.stdout}${result.stderr}`);
}

function isStale(output: string, inputs: string[]): boolean {
  if (!existsSync(output)) return true;
  const built = statSync(output).mtimeMs;
  return inputs.some((input) => newestMtime(join(REPO, input)) > built);
}

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

function withLock(fn: () => void): void {
  mkdirSync(join(REPO, '.tmp'), { recursive: true });
  const deadline = Date.now() + LOCK_STALE_MS;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // A lock left by a killed run is taken over once it is older than any build takes.
      if (Date.now() - statSync(LOCK, { throwIfNoEntry: false })!.mtimeMs > LOCK_STALE_MS)
        rmSync(LOCK, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${LOCK}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    fn();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
