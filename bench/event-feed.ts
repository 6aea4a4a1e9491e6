/**
 * The events feeds under `npm start`'s runtime, in one run on one DynamoDB Local:
 *   - write units per message: MESSAGES one-to-one messages sent over HTTP,
 *     the capacity the feed writer consumes appending their events (its
 *     PutItems on `EVT#`/`AEVT#` items) and reading the feeds' tails, per message;
 *   - replay: bob's socket reconnects with `?after=` while MISSED events wait
 *     in his feed, from the upgrade to the last replayed frame; the floor is a
 *     bare Query loop reading the same items, 100 a page, strongly consistent.
 * Run alone with `npx tsx bench/event-feed.ts` (one JSON line); `npm run bench` includes it.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import WebSocket from 'ws';
import { feedPartition } from '#shared/data/events';
import { db, tableName } from '#shared/db/client';
import { REPLAY_MAX } from '#shared/realtime/push';
import { startLocalRuntime } from '../scripts/local/runtime.ts';
import { seedDemo } from '../scripts/local/seed.ts';

process.env.LOG_LEVEL ??= 'silent';
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 100);
const MISSED = Number(process.env.BENCH_MISSED ?? 1000);

export interface EventFeedResult {
  messages: number;
  writeUnitsPerMessage: number;
  readUnitsPerMessage: number;
  eventsPerMessage: number;
  missed: number;
  replaySeconds: number;
  querySeconds: number;
}

const meter = { writeUnits: 0, readUnits: 0, puts: 0 };
/** Counts the capacity of the feed writer's own calls: puts of event items, and queries of a feed's partition. */
function meterFeedCalls(): void {
  db().middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as {
        Item?: { sk?: string };
        KeyConditionExpression?: string;
        ExpressionAttributeValues?: Record<string, unknown>;
      };
      // Native values, or marshalled ones ({"S": ...}) when the document client has converted them already.
      const text = (value: unknown) =>
        typeof value === 'object' && value !== null ? String((value as { S?: string }).S) : String(value ?? '');
      const skText = text(input.Item?.sk);
      const isPut = /^Put/.test(String(context.commandName)) && /^A?EVT#/.test(skText);
      const isTail =
        context.commandName === 'QueryCommand' &&
        /#EVENTS$/.test(text(input.ExpressionAttributeValues?.[':pk'])) &&
        !input.KeyConditionExpression?.includes('BETWEEN');
      if (isPut || isTail) (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
      const out = await next(args);
      const units = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity?.CapacityUnits ?? 0;
      if (isPut) {
        meter.writeUnits += units;
        meter.puts += 1;
      }
      if (isTail) meter.readUnits += units;
      return out;
    },
    { step: 'initialize', name: 'bench-event-feed' },
  );
}

const until = async (what: string, done: () => Promise<boolean> | boolean, ms = 300_000) => {
  for (const end = Date.now() + ms; !(await done());) {
    if (Date.now() > end) throw new Error(`${what} did not happen within ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

/** Until `count` stops growing for 2 s: the stream consumers have caught up. */
async function settled(count: () => Promise<number>): Promise<void> {
  let last = -1;
  for (let now = await count(); now !== last; now = await count()) {
    last = now;
    await new Promise((r) => setTimeout(r, 2_000));
  }
}

async function feedLength(partition: string): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': partition },
        Select: 'COUNT',
        ExclusiveStartKey: start,
      }),
    );
    count += out.Count ?? 0;
    start = out.LastEvaluatedKey;
  } while (start);
  return count;
}

export async function eventFeed(): Promise<EventFeedResult> {
  const stack = await startLocalRuntime({ messagingPort: 0, emailPort: null, rateLimits: false });
  try {
    const demo = await seedDemo();
    const headers = { authorization: `Bearer ${demo.token}`, 'content-type': 'application/x-www-form-urlencoded' };
    const conv = (await (
      await fetch(`${stack.messagingUrl}/v1/conversations`, { method: 'POST', headers, body: `contact_id=${demo.contactIds.bob}` })
    ).json()) as { id: string };
    const send = (text: string) =>
      fetch(`${stack.messagingUrl}/v1/messages`, { method: 'POST', headers, body: `conversation_id=${conv.id}&message=${text}` });
    const bobFeed = feedPartition({ accountId: demo.accountId, contactId: demo.contactIds.bob! });
    const allFeeds = [
      feedPartition({ accountId: demo.accountId }),
      bobFeed,
      feedPartition({ accountId: demo.accountId, contactId: demo.userContactId }),
    ];
    const total = async () => (await Promise.all(allFeeds.map(feedLength))).reduce((a, b) => a + b, 0);
    // Warm (not counted): the first send opens bob's conversation, and loads every module on the way.
    await send('warm');
    await until('the warm-up events', async () => (await feedLength(bobFeed)) >= 2);
    await new Promise((r) => setTimeout(r, 1_000));
    const before = await total();
    meterFeedCalls();
    for (let i = 0; i < MESSAGES; i++) await send(`m${i}`);
    // At least each message's message.created in the three feeds; then until nothing more is appended for 2 s.
    await until('the measured events', async () => (await total()) >= before + 3 * MESSAGES);
    await settled(total);
    const appended = (await total()) - before;
    const counted = { ...meter };

    // Replay: bob's last event, then MISSED more in his feed, then a socket resuming from it.
    const [lastSeen] = (
      await db().send(
        new QueryCommand({
          TableName: tableName(),
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :e)',
          ExpressionAttributeValues: { ':pk': bobFeed, ':e': 'EVT#' },
          ScanIndexForward: false,
          Limit: 1,
        }),
      )
    ).Items!;
    const lastId = (JSON.parse(String(lastSeen!.body)) as { id: string }).id;
    const bobBefore = await feedLength(bobFeed);
    for (let i = 0; (await feedLength(bobFeed)) < bobBefore + MISSED && i < 2 * MISSED; i++) {
      await send(`missed${i}`);
    }
    await settled(() => feedLength(bobFeed));
    // A replay sends at most REPLAY_MAX events, then closes: the client reconnects from its last one.
    const missed = Math.min((await feedLength(bobFeed)) - bobBefore, REPLAY_MAX);
    const started = performance.now();
    const ws = new WebSocket(`${stack.realtimeUrl}?after=${lastId}`, ['bearer', demo.token2]);
    let frames = 0;
    ws.on('message', () => (frames += 1));
    await until('the replay', () => frames >= missed);
    const replaySeconds = (performance.now() - started) / 1000;
    ws.terminate();
    // The floor: the same items, read with a bare Query loop.
    const queried = performance.now();
    let start: Record<string, unknown> | undefined;
    let read = 0;
    do {
      const out = await db().send(
        new QueryCommand({
          TableName: tableName(),
          KeyConditionExpression: 'pk = :pk AND sk > :after',
          ExpressionAttributeValues: { ':pk': bobFeed, ':after': String(lastSeen!.sk) },
          ConsistentRead: true,
          Limit: 100,
          ExclusiveStartKey: start,
        }),
      );
      read += out.Items?.length ?? 0;
      start = read < missed ? out.LastEvaluatedKey : undefined;
    } while (start);
    const querySeconds = (performance.now() - queried) / 1000;
    return {
      messages: MESSAGES,
      writeUnitsPerMessage: counted.writeUnits / MESSAGES,
      readUnitsPerMessage: counted.readUnits / MESSAGES,
      eventsPerMessage: appended / MESSAGES,
      missed,
      replaySeconds,
      querySeconds,
    };
  } finally {
    await stack.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await eventFeed()));
  process.exit(0);
}
