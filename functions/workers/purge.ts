import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { enqueuePurge, parsePurgeJob, purge } from '#shared/purge';
import { instrumented } from '#shared/util/invocation';
import { describeError, logger } from '#shared/util/logger';

/** Leave this much of the invocation for re-enqueueing the rest. */
const SAFETY_MS = 5_000;

/** Continues deleting a deleted conversation's messages or list's emails; a job out of time re-enqueues itself. */
export const handler = instrumented(async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    const job = parsePurgeJob(record.body);
    if (!job) {
      logger.warn('dropping malformed purge job', { message_id: record.messageId });
      continue;
    }
    try {
      const deadline = Date.now() + context.getRemainingTimeInMillis() - SAFETY_MS;
      if ((await purge(job, deadline)) === 'more') await enqueuePurge(job);
    } catch (error) {
      logger.warn('purge failed; the queue will redeliver it', { message_id: record.messageId, ...job, ...describeError(error) });
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
});
