import type { TestProject } from 'vitest/node';
import { startBackends } from '../../scripts/local/runtime.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    backendEnv: Record<string, string>;
  }
}

/** Starts DynamoDB Local, the SQS emulator and the S3 server on free loopback ports, and stops them after the run. */
export default async function setup(project: TestProject) {
  const backends = await startBackends({ tableName: 'test' });
  project.provide('backendEnv', backends.env);
  return () => backends.stop();
}
