import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { recordEvents } from '#shared/events/record';
import { changeOf } from '#shared/stream/change';
import { instrumented } from '#shared/util/invocation';
import { describeError, logger } from '#shared/util/logger';

/**
 * The table's change stream → the events feeds (shared/events/record.ts).
 * A batch that fails is handed over again whole: what was appended before
 * the failure is recognized by the change it came from and not appended
 * twice.
 */
export const handler = instrumented(async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  try {
    await recordEvents(event.Records.map(changeOf));
    return { batchItemFailures: [] };
  } catch (error) {
    const first = event.Records[0]?.dynamodb?.SequenceNumber ?? '';
    logger.warn('events of a change stream batch not recorded; the stream retries it', { sequence_number: first, ...describeError(error) });
    return { batchItemFailures: first ? [{ itemIdentifier: first }] : [] };
  }
});
