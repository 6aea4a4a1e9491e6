import { afterAll, expect, inject } from 'vitest';
import { refusedSends } from '../../scripts/local/queue-grants.ts';
import { useBackends } from '../../scripts/local/runtime.ts';

process.env.LOG_LEVEL ??= 'silent';
// Against a deployed stack (MESSAGING_BASE_URL / EMAIL_BASE_URL set) the caller's TABLE_NAME and AWS credentials are used instead.
if (!process.env.MESSAGING_BASE_URL && !process.env.EMAIL_BASE_URL) {
  const envs = inject('backendEnvs');
  useBackends(envs[(Number(process.env.VITEST_POOL_ID) || 1) - 1] ?? envs[0]!);
}

// A send the stack's grants would refuse fails the file that made it, even when a redelivery then did the work.
afterAll(() => expect(refusedSends(), 'queue sends the deployed stack would refuse').toEqual([]));
