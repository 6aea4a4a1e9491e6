import { enqueuePurge, parsePurgeJob, purge } from '#shared/purge';
import { worker } from '#shared/util/worker';

/** Leave this much of the invocation for re-enqueueing the rest. */
const SAFETY_MS = 5_000;

/** Continues deleting a deleted conversation's messages or list's emails; a job out of time re-enqueues itself. */
export const handler = worker({
  what: 'purge job',
  parse: parsePurgeJob,
  describe: (job) => ({ ...job }),
  each: async (job, delivery) => {
    const deadline = Date.now() + (delivery.context?.getRemainingTimeInMillis() ?? 60_000) - SAFETY_MS;
    if ((await purge(job, deadline)) === 'more') await enqueuePurge(job);
  },
});
