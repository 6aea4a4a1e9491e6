import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { toConnection } from '#shared/data/connections';
import { eventOf } from '#shared/data/events';
import { keys } from '#shared/db/keys';
import { pushLanes, realtimeEndpoint, type Lane } from '#shared/realtime/push';
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
  const lanes = new Map<string, Lane>();
  const laneOf = (acct: string, user: string) => {
    let lane = lanes.get(`${acct}|${user}`);
    if (!lane) lanes.set(`${acct}|${user}`, (lane = { owner: { accountId: acct, contactId: user }, steps: [] }));
    return lane;
  };
  for (const change of event.Records.map(changeOf)) {
    if (change?.eventName !== 'INSERT' || !change.newImage) continue;
    const appended = keys.userEvent.parse(change);
    if (appended)
      laneOf(appended.acct, appended.user).steps.push({ kind: 'event', seq: Number(appended.seq), event: eventOf(change.newImage) });
    const opened = keys.connection.parse(change);
    if (opened && (typeof change.newImage.after_seq === 'number' || change.newImage.cursor_problem !== undefined))
      laneOf(opened.acct, opened.user).steps.push({ kind: 'replay', connection: toConnection(change.newImage) });
  }
  await pushLanes(endpoint, [...lanes.values()]);
  return { batchItemFailures: [] };
});
