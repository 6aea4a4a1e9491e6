import type { SQSEvent } from 'aws-lambda';
import { failEmails } from '#shared/email/processing';
import { parseValidationJob } from '#shared/email/work';
import { instrumented } from '#shared/util/invocation';
import { logger } from '#shared/util/logger';

/** Consumes the validation dead-letter queue: those emails end as `error`, and their list too. */
export const handler = instrumented(async (event: SQSEvent): Promise<void> => {
  for (const record of event.Records) {
    const job = parseValidationJob(record.body);
    if (!job) {
      logger.warn('dropping malformed dead letter', { message_id: record.messageId });
      continue;
    }
    logger.warn('validation batch reached the dead-letter queue', { message_id: record.messageId, email_ids: job.emailIds });
    await failEmails(job.accountId, job.emailIds);
  }
});
