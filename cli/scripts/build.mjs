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
import { chmodSync, rmSync } from 'node:fs';
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

const { buildSync } = require('esbuild');
const bin = join(root, 'dist/svcctl.cjs');
buildSync({
  entryPoints: [join(root, 'dist/bin.js')],
  outfile: bin,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20.19',
  // Without the paths that point type checking at the SDK's source: the bundle takes the SDK's built
  // dist/, as an installed svcctl resolves it.
  tsconfig: join(root, 'tsconfig.build.json'),
  // The modules read files beside themselves through import.meta.url (cli-version.ts: ../package.json);
  // the bundle sits in dist/ as they do, so its own URL resolves the same paths.
  define: { 'import.meta.url': '__svcctl_module_url' },
  inject: [join(root, 'scripts/module-url.mjs')],
  // yaml is two thirds of the bundle and only -o yaml and YAML files need it (imported when used): left
  // out, it is loaded from the package's dependencies then, and start-up does not compile it. qrcode
  // likewise: only `sudo totp enroll` on a terminal draws one.
  external: ['yaml', 'qrcode'],
  logLevel: 'warning',
});
chmodSync(bin, 0o755);
