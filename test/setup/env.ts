import { afterAll, expect, inject } from 'vitest';
import { refusedSends } from '../../scripts/local/queue-grants.ts';
import { useBackends } from '../../scripts/local/runtime.ts';

process.env.LOG_LEVEL ??= 'silent';
const BASE_URLS = ['MESSAGING_BASE_URL', 'EMAIL_BASE_URL', 'CHAT_BASE_URL'];
// Against a deployed stack (a base URL and the TABLE_NAME its given steps write to) the caller's TABLE_NAME and AWS
// credentials are used instead. A base URL without TABLE_NAME is a local run's, from a shell that sourced npm start's
// .local/env: dropped, so that the suite runs on its own backends, as without it.
const deployed = BASE_URLS.some((name) => process.env[name]) && Boolean(process.env.TABLE_NAME);
if (!deployed) {
  for (const name of BASE_URLS) delete process.env[name];
  const envs = inject('backendEnvs');
  useBackends(envs[(Number(process.env.VITEST_POOL_ID) || 1) - 1] ?? envs[0]!);
}

// A send the stack's grants would refuse fails the file that made it, even when a redelivery then did the work.
afterAll(() => expect(refusedSends(), 'queue sends the deployed stack would refuse').toEqual([]));
