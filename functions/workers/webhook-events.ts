import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import type { Webhook } from '#shared/data/webhooks';
import { instrumented } from '#shared/util/invocation';
import { describeError, logger } from '#shared/util/logger';
import { changeOf } from '#shared/stream/change';
import { enqueueJobs, jobsOf } from '#shared/webhooks/publish';

/**
 * The table's change stream → webhook delivery jobs. Records are handled in
 * stream order; the first that fails is reported (ReportBatchItemFailures),
 * so the stream resumes from it and everything before it is not sent again.
 * Event ids come from the change, so a batch that is sent again anyway
 * (a crash after the send) yields the same ids.
 */
export const handler = instrumented(async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const endpoints = new Map<string, Promise<Webhook[]>>();
  for (const record of event.Records) {
    const sequenceNumber = record.dynamodb?.SequenceNumber ?? '';
    try {
      const change = changeOf(record);
      if (change) await enqueueJobs(await jobsOf(change, endpoints));
    } catch (error) {
      logger.warn('change stream record failed; the stream retries from it', { sequence_number: sequenceNumber, ...describeError(error) });
      return { batchItemFailures: [{ itemIdentifier: sequenceNumber }] };
    }
  }
  return { batchItemFailures: [] };
});
