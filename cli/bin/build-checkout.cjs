// Building the SDK and svcctl in a checkout when their output is missing or older than their sources:
// for bin/svcctl.cjs (the first `npx svcctl` after `npm ci`, or after a pull) and for the CLI's tests,
// which run the built bin as users do. Not part of the package (package.json "files").
//
// Stale means: an input file is newer than the output. The SDK's output is sdk/dist/index.js (its
// build script empties dist/ and writes every file); svcctl's is dist/svcctl.cjs, which bundles the
// SDK's dist/ and so is also stale when that is newer. package-lock.json counts for both: the bundle
// holds its dependencies' code. The bin itself needs only the bundle and makes it straight from both
// sources (buildForRun, RUN_INPUTS). A lock directory keeps concurrent runs (parallel test files, two
// shells) from building at once; whoever waited checks again before building.
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- CommonJS: loaded by the CommonJS bin */
const { mkdirSync, readdirSync, rmSync, statSync } = require('node:fs');
const { join } = require('node:path');

const REPO = join(__dirname, '..', '..');
const SDK_OUT = join(REPO, 'sdk/dist/index.js');
const CLI_OUT = join(REPO, 'cli/dist/svcctl.cjs');
const SHARED_INPUTS = ['tsconfig.json', 'package-lock.json'];
const SDK_INPUTS = [
  'sdk/src',
  'sdk/package.json',
  'sdk/tsconfig.json',
  'sdk/tsconfig.build.json',
  'sdk/scripts/build.mjs',
  ...SHARED_INPUTS,
];
const CLI_INPUTS = [
  'cli/src',
  'cli/package.json',
  'cli/tsconfig.json',
  'cli/tsconfig.build.json',
  'cli/scripts/build.mjs',
  'cli/scripts/module-url.mjs',
  'cli/scripts/bundle.cjs',
  // The bundle includes the SDK's build.
  'sdk/dist/index.js',
  ...SHARED_INPUTS,
];
// What the bin's own bundle (from the sources of both, bundle.cjs) is made of.
const RUN_INPUTS = [...CLI_INPUTS.filter((input) => input !== 'sdk/dist/index.js'), ...SDK_INPUTS];
const LOCK = join(REPO, '.tmp', 'svcctl-build.lock');
const LOCK_STALE_MS = 180_000;

/** What needs building now: `sdk`, `cli`, both or neither. */
function staleParts(options = {}) {
  const parts = [];
  const sdk = isStale(SDK_OUT, SDK_INPUTS);
  if (sdk) parts.push('sdk');
  if (options.cli !== false && (sdk || isStale(CLI_OUT, CLI_INPUTS))) parts.push('cli');
  return parts;
}

/**
 * Builds what is stale. `cli: false` builds the SDK only. `quiet` collects the builds' output into the
 * thrown error instead of showing it on stderr. Returns what was built.
 */
function ensureBuilt(options = {}) {
  if (staleParts(options).length === 0) return [];
  return withLock(() => {
    // Someone else may have built while this waited for the lock.
    const parts = staleParts(options);
    for (const part of parts) {
      const script = join(REPO, part, 'scripts/build.mjs');
      // Loaded here: child_process alone costs a few milliseconds of every start.
      const { spawnSync } = require('node:child_process');
      const result = spawnSync(process.execPath, [script], {
        cwd: REPO,
        // stdout too goes to stderr: svcctl's own stdout is its answer.
        stdio: options.quiet ? ['ignore', 'pipe', 'pipe'] : ['ignore', 2, 2],
        encoding: 'utf8',
      });
      if (result.status !== 0) {
        const output = options.quiet ? `\n${result.stdout}${result.stderr}` : '';
        const why = result.error ? result.error.message : `exit ${result.status ?? result.signal}`;
        throw new Error(`building ${part} failed: node ${script} (${why})${output}`);
      }
    }
    return parts;
  });
}

/**
 * For bin/svcctl.cjs: when the bundle is missing or older than the sources of svcctl and the SDK, bundles
 * them straight from TypeScript (a second; `npm run build` also type-checks and emits the packages'
 * dist/). A failed bundle ends the run.
 */
function buildForRun() {
  if (!isStale(CLI_OUT, RUN_INPUTS)) return;
  process.stderr.write(
    'svcctl: building the SDK and svcctl from this checkout (the bundle is missing or older than their sources)...\n',
  );
  try {
    withLock(() => {
      // Someone else may have built while this waited for the lock.
      if (isStale(CLI_OUT, RUN_INPUTS)) require('../scripts/bundle.cjs').bundleSvcctl({ fromSource: true });
    });
  } catch (err) {
    process.stderr.write(
      `svcctl: ${err instanceof Error ? err.message : String(err)}\nsvcctl: fix the error above, or build by hand: npm run build -w sdk && npm run build -w cli\n`,
    );
    process.exit(1);
  }
}

function isStale(output, inputs) {
  const built = mtimeOf(output);
  if (built === null) return true;
  return inputs.some((input) => newestMtime(join(REPO, input)) > built);
}

function mtimeOf(path) {
  const st = statSync(path, { throwIfNoEntry: false });
  return st ? st.mtimeMs : null;
}

function newestMtime(path) {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

function withLock(fn) {
  mkdirSync(join(REPO, '.tmp'), { recursive: true });
  const deadline = Date.now() + LOCK_STALE_MS;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      // A lock left by a killed run is taken over once it is older than any build takes.
      const since = mtimeOf(LOCK);
      if (since !== null && Date.now() - since > LOCK_STALE_MS)
        rmSync(LOCK, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${LOCK} (another build)`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

module.exports = { ensureBuilt, buildForRun, staleParts, REPO, CLI_OUT, SDK_OUT };
