// npm run build: a clean dist/ from src/ (a renamed module must not linger in the package), then the
// executable: dist/svcctl.cjs, the CLI and its dependencies in one CommonJS file.
//
// Why one CommonJS file: `svcctl --help` must start in under 150 ms, and most of that is Node's own
// start-up. Loading the CLI as ES modules took ~40–45 ms over `node -e 0` (the ESM loader alone adds
// ~11–15 ms for an empty file, then a dozen modules resolved and linked one by one); the bundle takes
// ~10–15 ms (timed against `node -e 0` in the same runs, as `npm run bench` does). dist/*.js stays the
// package's ES module build for anything that imports it. dist/bin.js's `#!/usr/bin/env node` line
// stays the bundle's first line.
import { spawnSync } from 'node:child_process';
import process from 'node:process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');

rmSync(join(root, 'dist'), { recursive: true, force: true });
const { status } = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
});
if (status !== 0) process.exit(status ?? 1);

// The bundle (bundle.cjs), from tsc's dist/bin.js against the SDK's dist/.
require('./bundle.cjs').bundleSvcctl();
