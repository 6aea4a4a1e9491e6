import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { enqueuePurge, purgeMessages, type PurgeJob } from '#shared/messaging/purge';
import { describeError, logger } from '#shared/util/logger';

/** Leave this much of the invocation for re-enqueueing the rest. */
const SAFETY_MS = 5_000;

const parseJob = (body: string): PurgeJob | undefined => {
  try {
    const job = JSON.parse(body) as PurgeJob;
    return job.kind === 'purge-conversation' && typeof job.accountId === 'string' && typeof job.conversationId === 'string'
      ? job
      : undefined;
  } catch {
    return undefined;
  }
};

/** Continues deleting a deleted conversation's messages; a job that runs out of time re-enqueues itself. */
export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    const job = parseJob(record.body);
    if (!job) {
      logger.warn('dropping malformed purge job', { message_id: record.messageId });
      continue;
    }
    try {
      const deadline = Date.now() + context.getRemainingTimeInMillis() - SAFETY_MS;
      if ((await purgeMessages(job.accountId, job.conversationId, deadline)) === 'more') await enqueuePurge(job);
    } catch (error) {
      logger.error('purge failed', { message_id: record.messageId, ...describeError(error) });
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
};
