// The SDK loaded from CommonJS (issue 34): customers' code and test runners are still often CommonJS,
// and `require('@svcplatform/sdk')` failed with ERR_PACKAGE_PATH_NOT_EXPORTED (exports had `import`
// only). Its exports' `default` condition lets Node's require(esm) (20.19+, 22.12+, 24) load the same
// build. Run as a customer's CommonJS file would be, from a directory outside any "type": "module".
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ensureSdkBuilt, REPO } from './support/build.js';

let dir: string;

beforeAll(() => {
  ensureSdkBuilt();
  dir = mkdtempSync(join(tmpdir(), 'sdk-cjs-'));
  // The package as an installed dependency: node_modules/@svcplatform/sdk, its own dependencies beside it.
  mkdirSync(join(dir, 'node_modules/@svcplatform'), { recursive: true });
  symlinkSync(join(REPO, 'sdk'), join(dir, 'node_modules/@svcplatform/sdk'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'cjs-consumer', private: true }));
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('loads with require(), the package and its ./operations subpath', () => {
  writeFileSync(
    join(dir, 'check.cjs'),
    [
      "const sdk = require('@svcplatform/sdk');",
      "const { operations } = require('@svcplatform/sdk/operations');",
      "const client = sdk.createClient({ baseUrl: 'http://127.0.0.1:9', retries: 0 });",
      'console.log(JSON.stringify({ client: typeof client.publicIncidentsList, isError: typeof sdk.isSvcApiError, operations: Object.keys(operations).length > 100 }));',
    ].join('\n'),
  );
  const r = spawnSync(process.execPath, ['--no-warnings', 'check.cjs'], { cwd: dir, encoding: 'utf8' });
  expect(r.stderr).toBe('');
  expect(JSON.parse(r.stdout)).toEqual({ client: 'function', isError: 'function', operations: true });
});
