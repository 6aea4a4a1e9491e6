import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { failEmails } from '#shared/email/processing';
import { parseValidationJob } from '#shared/email/work';
import { instrumented } from '#shared/util/invocation';
import { describeError, logger } from '#shared/util/logger';

/**
 * Consumes the validation dead-letter queue: those emails end as `error`,
 * and their list too. Records are handled one by one: one that fails comes
 * back alone (ReportBatchItemFailures), the others are done.
 */
export const handler = instrumented(async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    const job = parseValidationJob(record.body);
    if (!job) {
      logger.warn('dropping malformed dead letter', { message_id: record.messageId });
      continue;
    }
    logger.warn('validation batch reached the dead-letter queue', { message_id: record.messageId, email_ids: job.emailIds });
    try {
      await failEmails(job.accountId, job.emailIds);
    } catch (error) {
      logger.warn('dead letter not recorded; it comes back', { message_id: record.messageId, ...describeError(error) });
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
});
