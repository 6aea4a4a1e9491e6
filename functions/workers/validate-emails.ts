import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { listLookup, processEmails } from '#shared/email/processing';
import { parseValidationJob } from '#shared/email/work';
import { queues } from '#shared/queues';
import { describeError, logger } from '#shared/util/logger';

/**
 * Validates the emails each message names. A message whose emails could not
 * all finish is reported as failed (ReportBatchItemFailures) and comes back
 * after the visibility timeout; on its last receive, transient failures are
 * recorded as `error`. Redeliveries are harmless: finished emails are skipped.
 */
export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  await Promise.all(
    event.Records.map(async (record) => {
      const job = parseValidationJob(record.body);
      if (!job) {
        logger.warn('dropping malformed validation job', { message_id: record.messageId });
        return;
      }
      const lastAttempt = Number(record.attributes.ApproximateReceiveCount) >= queues.validation.maxReceiveCount;
      try {
        if (!(await processEmails(job.accountId, job.emailIds, lastAttempt, listLookup(job.accountId)))) {
          failures.push({ itemIdentifier: record.messageId });
        }
      } catch (error) {
        logger.warn('validation job failed', { message_id: record.messageId, email_ids: job.emailIds, ...describeError(error) });
        failures.push({ itemIdentifier: record.messageId });
      }
    }),
  );
  return { batchItemFailures: failures };
};
