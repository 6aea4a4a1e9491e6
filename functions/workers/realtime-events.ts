import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { toConnection } from '#shared/data/connections';
import { eventOf } from '#shared/data/events';
import { keys } from '#shared/db/keys';
import { pushLanes, realtimeEndpoint, type Lane, type LaneStep } from '#shared/realtime/push';
import { changeOf } from '#shared/stream/change';
import { instrumented } from '#shared/util/invocation';

/**
 * A user's events partition → frames on their open WebSockets: each event
 * appended to their feed goes to their connections, and a connection opened
 * with `?after=` first gets what it missed. Both are changes of that one
 * partition, which the stream hands over in order: a replay and the live
 * frames after it cannot cross. A frame is worth sending now or never (a
 * client that reconnects resumes from the feed), so nothing is retried.
 */
export const handler = instrumented(async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const endpoint = realtimeEndpoint();
  if (!endpoint) return { batchItemFailures: [] };
  const steps: { owner: string; step: LaneStep }[] = [];
  for (const change of event.Records.map(changeOf)) {
    if (change?.eventName !== 'INSERT' || !change.newImage) continue;
    const appended = keys.userEvent.parse(change);
    if (appended)
      steps.push({
        owner: `${appended.acct}|${appended.user}`,
        step: { kind: 'event', seq: Number(appended.seq), event: eventOf(change.newImage) },
      });
    const opened = keys.connection.parse(change);
    const connection = opened && toConnection(change.newImage);
    // Only a connection opened with `?after=` has anything to replay (or a bad cursor to be told of).
    if (connection && (connection.afterSeq !== undefined || connection.cursorProblem))
      steps.push({ owner: `${opened.acct}|${opened.user}`, step: { kind: 'replay', connection } });
  }
  const lanes = [...Map.groupBy(steps, (s) => s.owner)].map(([owner, own]): Lane => {
    const [accountId, contactId] = owner.split('|') as [string, string];
    return { owner: { accountId, contactId }, steps: own.map((s) => s.step) };
  });
  await pushLanes(endpoint, lanes);
  return { batchItemFailures: [] };
});
