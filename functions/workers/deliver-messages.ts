import { enqueueFanout, parseFanoutJob, runFanout } from '#shared/messaging/delivery';
import { worker } from '#shared/util/worker';

/** Leave this much of the invocation for re-enqueueing the rest. */
const SAFETY_MS = 5_000;

/** Continues delivering a group message to its recipients (or retracting it); a job out of time re-enqueues itself. */
export const handler = worker({
  what: 'delivery job',
  parse: parseFanoutJob,
  describe: (job) => ({ ...job }),
  each: async (job, delivery) => {
    const deadline = Date.now() + (delivery.context?.getRemainingTimeInMillis() ?? 60_000) - SAFETY_MS;
    if ((await runFanout(job.accountId, job.messageId, deadline)) === 'more') await enqueueFanout(job);
  },
});
