// Runs before every test file (vitest's setupFiles). Test files share their worker's modules
// (isolate: false), so what a support module did at its first import happens for one file only: what
// each file needs registered is registered here.
import { afterAll, expect, vi } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, removeTempDirs } from '../../cli/test/support/run-cli.js';

if (/[/\\]cli[/\\]test[/\\]e2e[/\\]/.test(expect.getState().testPath ?? '')) {
  vi.setConfig({ testTimeout: CLI_TEST_TIMEOUT_MS });
}

afterAll(removeTempDirs);
