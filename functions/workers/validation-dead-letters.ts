import { failEmails } from '#shared/email/outcomes';
import { parseValidationJob } from '#shared/email/work';
import { logger } from '#shared/util/logger';
import { worker } from '#shared/util/worker';

/**
 * Consumes the validation dead-letter queue: those emails end as `error`,
 * and their list too. Records are handled one by one: one that fails comes
 * back alone, the others are done.
 */
export const handler = worker({
  what: 'dead letter',
  parse: parseValidationJob,
  describe: (job) => ({ email_ids: job.emailIds }),
  each: async (job, delivery) => {
    logger.warn('validation batch reached the dead-letter queue', { message_id: delivery.messageId, email_ids: job.emailIds });
    await failEmails(job.accountId, job.emailIds);
  },
});
