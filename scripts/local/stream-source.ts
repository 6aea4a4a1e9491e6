import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { writeFileAtomic } from './atomic-file.ts';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ListStreamsCommand,
  type _Record,
  type Shard,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import type { StreamConsumer } from '#shared/routes';
import { invokeSource, type Invoker } from './lambda.ts';

export interface StreamSourceOptions {
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  tableName: string;
  /** Where the last handled sequence number of each shard is kept, so a restart resumes there (npm start keeps it with its data). */
  checkpointFile?: string;
  /** Without a checkpoint: from the oldest record kept (default), or only changes from now on (tests sharing a table). */
  from?: 'trim_horizon' | 'latest';
  /** Pause between polls of a shard with nothing new (shortened by `wakeStreamSources`). */
  idleMs?: number;
  run?: Invoker;
}

/**
 * A shard's position as kept on disk. `resume` trails the handled position
 * by REPLAY_MS: the SQS emulator keeps its queues in memory, so delivery
 * jobs queued shortly before a crash die with the process. A restart replays
 * the changes of those last seconds; their events keep their ids (derived
 * from the change), so a receiver sees at worst a duplicate `webhook-id`.
 * (Retries waiting in the emulator at the time of a crash are lost; on AWS
 * the queue is durable.)
 */
interface ShardCheckpoint {
  resume?: string;
  recent: { seq: string; at: number }[];
  /** When this process first saw each recent record (see recordTimeMs): a replay dates them, so ids them, the same. */
  seen?: SeenWindow;
}
type Checkpoints = Record<string, ShardCheckpoint>;

const REPLAY_MS = 30_000;

/**
 * A shard's records first-seen times of the last 2 × REPLAY_MS, in the order
 * they were handled, so a batch adds its own and drops the expired from the
 * front: rebuilding the whole window at every batch made each batch cost as
 * much as the minute of changes before it (most of the local runtime's CPU
 * under a bulk list add).
 */
class SeenWindow {
  private readonly times = new Map<string, number>();

  constructor(kept: Record<string, number> = {}) {
    for (const [seq, at] of Object.entries(kept)) this.times.set(seq, at);
  }

  add(batch: Record<string, number>, now: number) {
    for (const [seq, at] of Object.entries(batch)) this.times.set(seq, at);
    for (const [seq, at] of this.times) {
      if (at > now - 2 * REPLAY_MS) break;
      this.times.delete(seq);
    }
  }

  /** What the checkpoint file keeps: only the unexpired, as their order may not be their times'. */
  toJSON(): Record<string, number> {
    const now = Date.now();
    return Object.fromEntries([...this.times].filter(([, at]) => at > now - 2 * REPLAY_MS));
  }
}
/**
 * Only a consumer that queues work replays: one that only writes to the
 * table (the events feeds' writer) or posts frames worth sending now or
 * never (realtime) resumes right after its last handled record, as Lambda's
 * mapping does; a replay would hand the feed writer changes it appended
 * long ago.
 */
const replayMsOf = (consumer: StreamConsumer) => (consumer.sends?.length ? REPLAY_MS : 0);

/**
 * DynamoDB Local dates its records only to the minute (AWS to the second).
 * Inserts and updates carry their own time (shared/webhooks/publish.ts); a
 * delete does not, so its time is the first moment a poller of this process
 * saw the record, kept within its minute: the changes are read within tens
 * of ms of their commit. Shared by every consumer of the process (their
 * events of one change agree), and kept with the checkpoints for the replay
 * window.
 */
const firstSeen = new Map<string, number>();
const MAX_SEEN = 50_000;

function recordTimeMs(streamArn: string | undefined, record: _Record, now: number): number {
  const approx = record.dynamodb?.ApproximateCreationDateTime?.getTime() ?? now;
  if (approx % 60_000 !== 0) return approx;
  const key = `${streamArn}#${record.dynamodb?.SequenceNumber}`;
  let seen = firstSeen.get(key);
  if (seen === undefined) {
    if (firstSeen.size >= MAX_SEEN) firstSeen.delete(firstSeen.keys().next().value!);
    firstSeen.set(key, (seen = now));
  }
  return Math.min(Math.max(seen, approx), approx + 59_999);
}

type Value = Record<string, unknown>;
/**
 * The streams client reads an empty map attribute (`{"M": {}}` on the wire)
 * as `{}`, which no unmarshaller accepts; Lambda's event carries `{"M": {}}`.
 */
function wireValue(value: Value): Value {
  if (Object.keys(value).length === 0) return { M: {} };
  if (value.M) return { M: wireImage(value.M as Record<string, Value>) };
  if (value.L) return { L: (value.L as Value[]).map(wireValue) };
  return value;
}
const wireImage = (image: Record<string, Value> | undefined) =>
  image && Object.fromEntries(Object.entries(image).map(([name, value]) => [name, wireValue(value)]));

/**
 * Lambda's ParallelizationFactor: a shard's records split into up to `factor`
 * concurrent batches by partition key, so the changes of one item stay in
 * order in one batch.
 */
function lanes(records: _Record[], factor: number): _Record[][] {
  if (factor <= 1) return records.length > 0 ? [records] : [];
  const laneOf = (r: _Record) =>
    createHash('sha1')
      .update(r.dynamodb?.Keys?.pk?.S ?? '')
      .digest()
      .readUInt32BE(0) % factor;
  return [...Map.groupBy(records, laneOf).values()];
}

/** The idle pollers of this process (see wakeStreamSources). */
const wakers = new Set<() => void>();

/**
 * Wakes every poller of this process to read its shards now: the local
 * runtime calls it after each write its own handlers make (the table's
 * writes come almost all from this process), so a change is read at once
 * while an idle poller asks DynamoDB Local only a few times a second
 * rather than 40, which kept an idle runtime at a third of a core.
 */
export const wakeStreamSources = () => wakers.forEach((wake) => wake());

/** Idle polls when writes wake the pollers: what they still find is written by other processes (the admin command line). */
export const WOKEN_IDLE_MS = { latencySensitive: 250, other: 500 };

/**
 * What Lambda's DynamoDB event source mapping does, for one consumer, on
 * DynamoDB Local's stream: read each shard in order, invoke with a batch,
 * and on a reported failure (or a throw) start again from the failed
 * record, up to `retryAttempts` times, then log it and go on (the deployed
 * mapping's dead-letter queue). The position is checkpointed after every
 * batch (see ShardCheckpoint), so a process killed mid-way resumes at most
 * REPLAY_MS before the first unhandled record.
 */
export function startStreamSource(consumer: StreamConsumer, options: StreamSourceOptions) {
  const client = new DynamoDBStreamsClient({ endpoint: options.endpoint, region: options.region, credentials: options.credentials });
  const run = options.run ?? invokeSource;
  const idleMs = options.idleMs ?? (consumer.latencySensitive ? WOKEN_IDLE_MS.latencySensitive : WOKEN_IDLE_MS.other);
  const replayMs = replayMsOf(consumer);
  const kept =
    options.checkpointFile && existsSync(options.checkpointFile)
      ? (JSON.parse(readFileSync(options.checkpointFile, 'utf8')) as Record<
          string,
          Omit<ShardCheckpoint, 'seen'> & { seen?: Record<string, number> }
        >)
      : {};
  const checkpoints: Checkpoints = {};
  /** In this process: the last handled record of each shard. */
  const handled = new Map<string, string>();
  // Records seen before a restart keep the time they were first seen (recordTimeMs).
  for (const [key, c] of Object.entries(kept)) {
    const arn = key.slice(0, key.lastIndexOf('/'));
    for (const [seq, at] of Object.entries(c.seen ?? {})) if (!firstSeen.has(`${arn}#${seq}`)) firstSeen.set(`${arn}#${seq}`, at);
    checkpoints[key] = { ...c, seen: new SeenWindow(c.seen) };
  }
  const save = (key: string, seq: string, times: Record<string, number>) => {
    handled.set(key, seq);
    const now = Date.now();
    const c = (checkpoints[key] ??= { recent: [] });
    c.recent.push({ seq, at: now });
    while (c.recent.length > 0 && c.recent[0]!.at <= now - replayMs) c.resume = c.recent.shift()!.seq;
    (c.seen ??= new SeenWindow()).add(times, now);
    if (options.checkpointFile) writeFileAtomic(options.checkpointFile, JSON.stringify(checkpoints));
  };
  let running = true;
  let sleeping: { timer: NodeJS.Timeout; resolve: () => void; idle: boolean } | undefined;
  const sleep = (ms: number, idle = false) =>
    new Promise<void>((resolve) => {
      sleeping = { timer: setTimeout(resolve, ms), resolve, idle };
    });
  const endSleep = () => {
    if (!sleeping) return;
    clearTimeout(sleeping.timer);
    sleeping.resolve();
  };
  /** Written to since this pass began: the pass may have read before the write, so another follows at once. */
  let woken = false;
  const wake = () => {
    woken = true;
    // A retry's backoff is not cut short, only an idle pause.
    if (sleeping?.idle) endSleep();
  };
  wakers.add(wake);

  const iterators = new Map<string, string | null>();
  const failures = new Map<string, number>();
  let streamArn: string | undefined;
  let shards: Shard[] = [];
  let described = 0;

  async function iteratorFor(shardId: string, at?: string): Promise<string | undefined> {
    const key = `${streamArn}/${shardId}`;
    const kept = checkpoints[key];
    // In this process, right after the last handled record; after a restart, REPLAY_MS before it
    // (from the start when the last run did not last that long).
    const after = handled.get(key) ?? kept?.resume;
    const replayAll = !after && kept !== undefined;
    const input = at
      ? { ShardIteratorType: 'AT_SEQUENCE_NUMBER' as const, SequenceNumber: at }
      : after
        ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER' as const, SequenceNumber: after }
        : { ShardIteratorType: options.from === 'latest' && !replayAll ? ('LATEST' as const) : ('TRIM_HORIZON' as const) };
    const out = await client.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ...input }));
    return out.ShardIterator;
  }

  async function describe() {
    if (!streamArn) {
      const listed = await client.send(new ListStreamsCommand({ TableName: options.tableName }));
      streamArn = listed.Streams?.[0]?.StreamArn;
      if (!streamArn) return;
    }
    const out = await client.send(new DescribeStreamCommand({ StreamArn: streamArn }));
    shards = out.StreamDescription?.Shards ?? [];
    described = Date.now();
  }

  const toEvent = (records: _Record[], times: Record<string, number>): DynamoDBStreamEvent => ({
    Records: records.map(
      (r) =>
        ({
          eventID: r.eventID,
          eventName: r.eventName,
          eventVersion: r.eventVersion,
          eventSource: 'aws:dynamodb',
          awsRegion: options.region,
          eventSourceARN: streamArn,
          dynamodb: {
            ...r.dynamodb,
            NewImage: wireImage(r.dynamodb?.NewImage as Record<string, Value> | undefined),
            OldImage: wireImage(r.dynamodb?.OldImage as Record<string, Value> | undefined),
            ApproximateCreationDateTime: times[r.dynamodb!.SequenceNumber!]! / 1000,
          },
        }) as DynamoDBRecord,
    ),
  });

  /** The mapping's event filter (`sortKeys`, `insertsOnly`): Lambda never invokes the function with a change it leaves out. */
  const { exact, prefix } = consumer.sortKeys;
  const passesFilter = (r: _Record) => {
    if (consumer.insertsOnly && r.eventName !== 'INSERT') return false;
    const sk = r.dynamodb?.Keys?.sk?.S ?? '';
    return exact.includes(sk) || prefix.some((p) => sk.startsWith(p));
  };

  /** One batch of one shard; resolves to whether it had records. */
  async function pollShard(shard: Shard): Promise<boolean> {
    const shardId = shard.ShardId!;
    const key = `${streamArn}/${shardId}`;
    if (!iterators.has(shardId)) iterators.set(shardId, (await iteratorFor(shardId)) ?? null);
    const iterator = iterators.get(shardId);
    if (!iterator) return false;
    const out = await client.send(
      new GetRecordsCommand({ ShardIterator: iterator, Limit: consumer.batchSize * (consumer.parallelization ?? 1) }),
    );
    const records = out.Records ?? [];
    if (records.length === 0) {
      iterators.set(shardId, out.NextShardIterator ?? null);
      return false;
    }
    const now = Date.now();
    const times = Object.fromEntries(records.map((r) => [r.dynamodb!.SequenceNumber!, recordTimeMs(streamArn, r, now)]));
    const failed = await Promise.all(
      lanes(records.filter(passesFilter), consumer.parallelization ?? 1).map(async (lane) => {
        try {
          const result = (await run({ handler: consumer.handler }, toEvent(lane, times), consumer.timeoutSeconds)) as
            DynamoDBBatchResponse | undefined;
          return result?.batchItemFailures?.[0]?.itemIdentifier;
        } catch (error) {
          console.error(`[${consumer.name}] invocation failed`, (error as Error).message);
          return lane[0]!.dynamodb!.SequenceNumber;
        }
      }),
    );
    // The earliest failure in the shard's order: the stream resumes there (records after it in other lanes run again).
    const failedAt = records.find((r) => failed.includes(r.dynamodb?.SequenceNumber))?.dynamodb?.SequenceNumber;
    const done =
      failedAt === undefined
        ? records
        : records.slice(
            0,
            records.findIndex((r) => r.dynamodb?.SequenceNumber === failedAt),
          );
    if (done.length > 0) save(key, done.at(-1)!.dynamodb!.SequenceNumber!, times);
    if (failedAt === undefined) {
      iterators.set(shardId, out.NextShardIterator ?? null);
      return true;
    }
    const tries = (failures.get(failedAt) ?? 0) + 1;
    failures.set(failedAt, tries);
    if (tries > consumer.retryAttempts) {
      console.error(`[${consumer.name}] giving up on stream record ${failedAt} after ${tries} attempts`);
      save(key, failedAt, times);
      iterators.set(shardId, (await iteratorFor(shardId)) ?? null);
    } else {
      iterators.set(shardId, (await iteratorFor(shardId, failedAt)) ?? null);
      await sleep(Math.min(5_000, 100 * 2 ** tries));
    }
    return true;
  }

  const loop = (async () => {
    while (running) {
      woken = false;
      try {
        if (!streamArn || Date.now() - described > 5_000) await describe();
        let busy = false;
        const open = new Set(shards.map((s) => s.ShardId!));
        for (const shard of shards) {
          if (!running) break;
          // A child shard's records follow its parent's: read it once the parent is finished.
          if (shard.ParentShardId && open.has(shard.ParentShardId) && iterators.get(shard.ParentShardId) !== null) continue;
          busy = (await pollShard(shard)) || busy;
        }
        if (!busy && running && !woken) await sleep(idleMs, true);
      } catch (error) {
        if (!running) break;
        console.error(`[${consumer.name}] stream poll failed`, (error as Error).message);
        // An expired iterator (or a re-created table) starts over from the checkpoints.
        iterators.clear();
        streamArn = undefined;
        await sleep(1_000);
      }
    }
  })();

  return {
    stop: async () => {
      running = false;
      wakers.delete(wake);
      endSleep();
      await loop;
      client.destroy();
    },
  };
}
