import { inject } from 'vitest';
import { useBackends } from '../../scripts/local/runtime.ts';

process.env.LOG_LEVEL ??= 'silent';
// Against a deployed stack (MESSAGING_BASE_URL / EMAIL_BASE_URL set) the caller's TABLE_NAME and AWS credentials are used instead.
if (!process.env.MESSAGING_BASE_URL && !process.env.EMAIL_BASE_URL) {
  const envs = inject('backendEnvs');
  useBackends(envs[(Number(process.env.VITEST_POOL_ID) || 1) - 1] ?? envs[0]!);
}
