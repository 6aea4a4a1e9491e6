import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One DynamoDB Local and one SQS emulator for the whole run; every test makes its own accounts.
    globalSetup: ['test/setup/backends.ts'],
    setupFiles: ['test/setup/env.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Bundles `cdk synth` wrote load with Node's own loader, as on Lambda, not transformed by the test runner.
    server: { deps: { external: [/[\\/]asset\.[0-9a-f]{64}[\\/]/] } },
    reporters: ['default', './test/setup/summary-reporter.ts'],
  },
});
