// npm run build: a clean dist/ from src/. tsc does not emit hand-written or generated .d.ts files,
// so the generated api.d.ts is copied beside the .d.ts files that import it.
import { spawnSync } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

rmSync(join(root, 'dist'), { recursive: true, force: true });
const { status } = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
});
if (status !== 0) process.exit(status ?? 1);
copyFileSync(join(root, 'src/generated/api.d.ts'), join(root, 'dist/generated/api.d.ts'));
