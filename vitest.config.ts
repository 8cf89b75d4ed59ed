import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'server/**/*.test.ts', 'sdk/test/**/*.test.ts', 'cli/test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Each file gets its own database, so files run in parallel; 2 cores here.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    typecheck: { enabled: true, include: ['sdk/test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
  },
});
