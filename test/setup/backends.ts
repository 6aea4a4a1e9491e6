import type { TestProject } from 'vitest/node';
import { startBackends } from '../../scripts/local/runtime.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** One set of backends per worker, the n-th for VITEST_POOL_ID n. */
    backendEnvs: Record<string, string>[];
  }
}

/**
 * Starts DynamoDB Local, the SQS emulator and the S3 server on free loopback ports, one set per worker, and stops
 * them after the run. Files running at once then share nothing: a file's queue workers and stream consumers run
 * with its own stand-ins (DNS, SMTP, the realtime server), and would mishandle another file's work on a shared
 * queue or stream. One table per worker in a single DynamoDB Local was tried and slowed it to a crawl (its stream
 * bookkeeping on every write runs on one thread).
 */
export default async function setup(project: TestProject) {
  const workers = project.config.maxWorkers;
  const backends = await Promise.all(Array.from({ length: workers }, () => startBackends({ tableName: 'test' })));
  project.provide(
    'backendEnvs',
    backends.map((b) => b.env),
  );
  return () => Promise.all(backends.map((b) => b.stop()));
}
