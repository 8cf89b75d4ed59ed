import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { DurationSequencer } from './test/support/sequencer.js';

export default defineConfig({
  // Tests use the SDK's source, like the type checker (tsconfig paths), not a stale dist.
  resolve: {
    alias: [
      {
        find: /^@svcplatform\/sdk$/,
        replacement: fileURLToPath(new URL('./sdk/src/index.ts', import.meta.url)),
      },
      {
        find: /^@svcplatform\/sdk\/operations$/,
        replacement: fileURLToPath(new URL('./sdk/src/generated/operations.ts', import.meta.url)),
      },
    ],
  },
  test: {
    include: ['test/**/*.test.ts', 'server/**/*.test.ts', 'sdk/test/**/*.test.ts', 'cli/test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/each-file.ts'],
    // Each file gets its own database (and its own ports), so files run in parallel. Files mostly wait
    // (on PostgreSQL, child programs, mail, the job queue): vitest's default of one fork on 2 cores ran
    // them one after another and the suite took 78 minutes on CI, so three run at once.
    pool: 'forks',
    // A file's first import of the server's modules through vite's runner cost about 2.3 s of CPU, and
    // isolation paid it again for every one of the suite's 270 files. Files share their worker's module
    // graph instead: each starts its own app, database, ports and data directory (test/support/app.ts),
    // and a file that changes the process (process.env) puts it back when it ends.
    isolate: false,
    maxWorkers: Number(process.env.VITEST_MAX_WORKERS ?? 3),
    // Longest files first (test/durations.json), so the run does not end on one long file.
    sequence: { sequencer: DurationSequencer },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // CI asks for a JSON report too, to print the plain closing count line.
    reporters: process.env.VITEST_JSON_REPORT ? ['default', 'json'] : ['default'],
    outputFile: process.env.VITEST_JSON_REPORT ? { json: process.env.VITEST_JSON_REPORT } : undefined,
    typecheck: { enabled: true, include: ['sdk/test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
  },
});
