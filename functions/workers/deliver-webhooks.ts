import { deliver, parseDeliveryJob } from '#shared/webhooks/deliver';
import { worker } from '#shared/util/worker';

/** One webhook attempt per job; a failed attempt schedules the next as a new (delayed) message, so only our own errors redeliver. */
export const handler = worker({
  what: 'webhook delivery job',
  parse: parseDeliveryJob,
  parallel: true,
  describe: (job) => ({ webhook_id: job.webhook_id, event_id: job.event.id, attempt: job.attempt }),
  each: (job) => deliver(job),
});
