import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Tests use the SDK's source, like the type checker (tsconfig paths), not a stale dist.
  resolve: {
    alias: [
      { find: /^@svcplatform\/sdk$/, replacement: fileURLToPath(new URL('./sdk/src/index.ts', import.meta.url)) },
      {
        find: /^@svcplatform\/sdk\/operations$/,
        replacement: fileURLToPath(new URL('./sdk/src/generated/operations.ts', import.meta.url)),
      },
    ],
  },
  test: {
    include: ['test/**/*.test.ts', 'server/**/*.test.ts', 'sdk/test/**/*.test.ts', 'cli/test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Each file gets its own database, so files run in parallel; 2 cores here.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // CI asks for a JSON report too, to print the plain closing count line.
    reporters: process.env.VITEST_JSON_REPORT ? ['default', 'json'] : ['default'],
    outputFile: process.env.VITEST_JSON_REPORT ? { json: process.env.VITEST_JSON_REPORT } : undefined,
    typecheck: { enabled: true, include: ['sdk/test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
  },
});
