import { defineConfig } from 'vitest/config';

// The SDK nags on every client under Node 20, the oldest Node the suite runs on (engines);
// Lambda runs the major in .nvmrc, where it is silent.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

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
