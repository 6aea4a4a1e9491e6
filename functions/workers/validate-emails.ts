import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { listLookup, recordOutcomes, validateJob } from '#shared/email/processing';
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
  const failures = new Set<string>();
  // Messages of one batch mostly share an account and a list: each list is looked up once.
  const lookups = new Map<string, ReturnType<typeof listLookup>>();
  const lookup = (accountId: string) => lookups.get(accountId) ?? lookups.set(accountId, listLookup(accountId)).get(accountId)!;
  const validated = await Promise.all(
    event.Records.map(async (record) => {
      const job = parseValidationJob(record.body);
      if (!job) {
        logger.warn('dropping malformed validation job', { message_id: record.messageId });
        return [];
      }
      const lastAttempt = Number(record.attributes.ApproximateReceiveCount) >= queues.validation.maxReceiveCount;
      try {
        const { done, retry } = await validateJob(job.accountId, job, lastAttempt, lookup(job.accountId));
        if (retry) failures.add(record.messageId);
        return done.map((d) => ({ ...d, messageId: record.messageId }));
      } catch (error) {
        logger.warn('validation job failed; the queue will redeliver it', { message_id: record.messageId, email_ids: job.emailIds, ...describeError(error) });
        failures.add(record.messageId);
        return [];
      }
    }),
  );
  // The whole batch's outcomes are recorded together: one transaction per list, not one per message.
  const failed = await recordOutcomes(validated.flat());
  for (const group of failed) for (const d of group) failures.add(d.messageId);
  return { batchItemFailures: [...failures].map((itemIdentifier) => ({ itemIdentifier })) };
});
