// npm run build: a clean dist/ from src/ (a renamed module must not linger in the package), and an
// executable bin for running it from a checkout.
import { spawnSync } from 'node:child_process';
import process from 'node:process';
import { chmodSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

rmSync(join(root, 'dist'), { recursive: true, force: true });
const { status } = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
});
if (status !== 0) process.exit(status ?? 1);
chmodSync(join(root, 'dist/bin.js'), 0o755);
