import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { changeOf } from '#shared/stream/change';
import { audienceOf, batchReads, userEventsOf, type UserEvent } from '#shared/stream/users';
import { BatchConnections, pushEvents, realtimeEndpoint } from '#shared/realtime/push';
import { instrumented } from '#shared/util/invocation';
import { describeError, logger } from '#shared/util/logger';
import { inParallel } from '#shared/util/parallel';

/** Changes turned into events at once (each reads a little: the message, a conversation id). */
const CHANGES_AT_ONCE = 8;

/**
 * The table's change stream → frames on the users' open WebSockets. A frame
 * is worth sending now or never (a client that reconnects reads the API),
 * so a change whose events cannot be made is logged and skipped rather than
 * retried, and a retried batch does not send its other frames twice.
 */
export const handler = instrumented(async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const endpoint = realtimeEndpoint();
  if (!endpoint) return { batchItemFailures: [] };
  const reads = batchReads();
  const connections = new BatchConnections();
  const changes = event.Records.map(changeOf);
  const perChange: UserEvent[][] = Array.from({ length: changes.length }, () => []);
  await inParallel(changes, CHANGES_AT_ONCE, async (change, i) => {
    if (!change) return;
    try {
      // Most members of a large group are not connected: their changes cost one Query, not the reads of an event.
      const audience = audienceOf(change);
      if (audience && !(await connections.anyOf(audience))) return;
      perChange[i] = await userEventsOf(change, reads);
    } catch (error) {
      logger.warn('realtime events of a change skipped', { sequence_number: change.sequenceNumber, ...describeError(error) });
    }
  });
  await pushEvents(endpoint, perChange.flat(), connections);
  return { batchItemFailures: [] };
});
