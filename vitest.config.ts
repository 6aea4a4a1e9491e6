import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// `npm test` picks a supported Node by itself; `npx vitest` runs on whatever Node is first on PATH, and on an older one
// the suite would fail deep inside (Map.groupBy, middy 7) rather than say why.
const engines = (JSON.parse(readFileSync(new URL('package.json', import.meta.url), 'utf8')) as { engines: { node: string } }).engines.node;
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const [wantMajor = 0, wantMinor = 0] = (/\d+(?:\.\d+)?/.exec(engines)?.[0] ?? '0').split('.').map(Number);
if (major < wantMajor || (major === wantMajor && minor < wantMinor))
  throw new Error(
    `Node ${process.versions.node} is older than the project needs (${engines}): run \`npm test -- <file>\`, which picks a supported Node, or put one first on PATH`,
  );

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One DynamoDB Local and one SQS emulator for the whole run; every test makes its own accounts.
    globalSetup: ['test/setup/backends.ts'],
    setupFiles: ['test/setup/env.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Test files mostly wait on DynamoDB Local, the emulators and the processes they start, so one worker per core,
    // not vitest's default of one fewer (a single worker on a 2-core machine: 782 s against 517 s for two). At most
    // two, the number measured: each worker starts its own backends (test/setup/backends.ts); `--maxWorkers` sets more.
    maxWorkers: Math.min(availableParallelism(), 2),
    // Bundles `cdk synth` wrote load with Node's own loader, as on Lambda, not transformed by the test runner.
    server: { deps: { external: [/[\\/]asset\.[0-9a-f]{64}[\\/]/] } },
    reporters: ['default', './test/setup/summary-reporter.ts'],
  },
});
