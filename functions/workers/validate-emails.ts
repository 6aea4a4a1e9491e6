import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { endListRounds, listLookup, processEmail } from '#shared/email/processing';
import { parseValidationJob } from '#shared/email/work';
import { queues } from '#shared/queues';
import { instrumented } from '#shared/util/invocation';
import { describeError, logger } from '#shared/util/logger';

/**
 * Validates the emails each message names. A message whose emails could not
 * all finish is reported as failed (ReportBatchItemFailures) and comes back
 * after the visibility timeout; on its last receive, transient failures are
 * recorded as `error`. Redeliveries are harmless: finished emails are skipped.
 */
export const handler = instrumented(async (event: SQSEvent): Promise<SQSBatchResponse> => {
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
        const listExists = listLookup(job.accountId);
        const finishedLists = new Set<number>();
        const done = await Promise.all(
          job.emailIds.map((id) => processEmail(job.accountId, id, lastAttempt, listExists, finishedLists)),
        );
        await endListRounds(job.accountId, finishedLists);
        if (done.includes(false)) failures.push({ itemIdentifier: record.messageId });
      } catch (error) {
        logger.warn('validation job failed; the queue will redeliver it', {
          message_id: record.messageId,
          email_ids: job.emailIds,
          ...describeError(error),
        });
        failures.push({ itemIdentifier: record.messageId });
      }
    }),
  );
  return { batchItemFailures: failures };
});
