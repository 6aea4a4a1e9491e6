/**
 * Realtime latency under `npm start`'s runtime: from sending
 * `POST /v1/messages` to the frame of that message at the recipient's
 * WebSocket (the change stream poll, the realtime consumer, the
 * `@connections` post, the socket), with CLIENTS users of the account
 * connected, one message at a time, MESSAGES of them; p50 and p99. The floor,
 * measured in the same run on the same DynamoDB Local: a bare reader of the
 * table's stream, polling as the local runtime does, from sending a `PutItem`
 * to reading its record. Then the same latency while a message to a 1,000-member
 * group fans out: what one large group costs everyone else. Run alone with
 * `npx tsx bench/realtime-latency.ts` (one JSON line); `npm run bench`
 * includes it.
 */
import { execFileSync } from 'node:child_process';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBStreamsClient,
  DescribeStreamCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ListStreamsCommand,
} from '@aws-sdk/client-dynamodb-streams';
import WebSocket from 'ws';
import { createContact } from '#shared/data/contacts';
import { addMember } from '#shared/data/group-members';
import { issueToken } from '#shared/data/tokens';
import { startLocalRuntime } from '../scripts/local/runtime.ts';
import { seedDemo } from '../scripts/local/seed.ts';

process.env.LOG_LEVEL ??= 'silent';
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 200);
const CLIENTS = 50;
const GROUP_MEMBERS = 1_000;
/** 1:1 messages timed while the group's fan-out runs. */
const DURING_GROUP = 20;
/** A burst: this many 1:1 messages, BURST_SENDERS requests at a time, each timed from its answer to bob's frame. */
const BURST_MESSAGES = 100;
const BURST_SENDERS = 4;

export interface RealtimeLatency {
  messages: number;
  clients: number;
  p50Ms: number;
  p99Ms: number;
  floorP50Ms: number;
  floorP99Ms: number;
  groupMembers: number;
  duringGroupP50Ms: number;
  duringGroupMaxMs: number;
  /** From sending the group message to its frame at its last connected member. */
  groupLastFrameMs: number;
  /** The burst's rate of sends, and from each `201` to bob's frame of it: p50, worst, and how many over the contract's 1 s. */
  burstPerSecond: number;
  burstP50Ms: number;
  burstMaxMs: number;
  burstOver1s: number;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

/**
 * The floor: a reader polling the table's stream in a loop of its own (again
 * at once after records, after 25 ms after none), timed from sending a
 * `PutItem` to reading its record. The local runtime's readers poll less
 * when idle and are woken by its own writes instead (scripts/local/stream-source.ts).
 */
async function streamFloor(env: Record<string, string>, samples: number): Promise<number[]> {
  const config = {
    endpoint: env.AWS_ENDPOINT_URL_DYNAMODB!,
    region: env.AWS_REGION!,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  };
  const ddb = new DynamoDBClient(config);
  const streams = new DynamoDBStreamsClient(config);
  const seen = new Map<string, number>();
  let reading = true;
  try {
    const arn = (await streams.send(new ListStreamsCommand({ TableName: env.TABLE_NAME }))).Streams![0]!.StreamArn!;
    const shards = (await streams.send(new DescribeStreamCommand({ StreamArn: arn }))).StreamDescription!.Shards!;
    const open = shards.find((s) => !s.SequenceNumberRange?.EndingSequenceNumber) ?? shards.at(-1)!;
    let iterator = (await streams.send(new GetShardIteratorCommand({ StreamArn: arn, ShardId: open.ShardId, ShardIteratorType: 'LATEST' })))
      .ShardIterator;
    const reader = (async () => {
      while (reading && iterator) {
        const out = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 100 }));
        iterator = out.NextShardIterator;
        const now = performance.now();
        for (const r of out.Records ?? []) seen.set(r.dynamodb?.Keys?.pk?.S ?? '', now);
        if ((out.Records ?? []).length === 0) await new Promise((r) => setTimeout(r, 25));
      }
    })();
    const latencies: number[] = [];
    for (let i = 0; i < samples; i++) {
      const pk = `BENCH#FLOOR#${i}`;
      const started = performance.now();
      await ddb.send(new PutItemCommand({ TableName: env.TABLE_NAME, Item: { pk: { S: pk }, sk: { S: 'X' } } }));
      while (!seen.has(pk)) await new Promise((r) => setTimeout(r, 1));
      latencies.push(seen.get(pk)! - started);
    }
    reading = false;
    await reader;
    return latencies;
  } finally {
    reading = false;
    ddb.destroy();
    streams.destroy();
  }
}

export async function realtimeLatency(messages = MESSAGES): Promise<RealtimeLatency> {
  const stack = await startLocalRuntime({ messagingPort: 0, emailPort: null, rateLimits: false });
  const sockets: WebSocket[] = [];
  try {
    const demo = await seedDemo();
    const owner = (contactId: string) => ({ accountId: demo.accountId, contactId });
    // CLIENTS connected users: bob (the recipient) and members of the demo group.
    const others = await Promise.all(
      Array.from({ length: CLIENTS - 1 }, async (_, i) => {
        const contact = await createContact({ accountId: demo.accountId, username: `listener${i}` });
        await addMember(demo.accountId, demo.groupId, contact.id);
        return issueToken(owner(contact.id));
      }),
    );
    /** Each socket's frames: message id → when it arrived. */
    const arrivals = new Map<WebSocket, Map<string, number>>();
    const waiting = new Map<string, () => void>();
    for (const token of [demo.token2, ...others]) {
      const ws = new WebSocket(stack.realtimeUrl!, ['bearer', token]);
      const seen = new Map<string, number>();
      arrivals.set(ws, seen);
      ws.on('message', (data) => {
        const at = performance.now();
        const frame = JSON.parse(data.toString()) as { type: string; data: { object: { id: string } } };
        if (frame.type !== 'message.created') return;
        seen.set(frame.data.object.id, at);
        if (ws === sockets[0]) waiting.get(frame.data.object.id)?.();
      });
      await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
      sockets.push(ws);
    }
    const bob = sockets[0]!;
    const auth = { authorization: `Bearer ${demo.token}`, 'content-type': 'application/x-www-form-urlencoded' };
    const post = async (path: string, body: string) => {
      const started = performance.now();
      const res = await fetch(`${stack.messagingUrl}${path}`, { method: 'POST', headers: auth, body });
      const answered = performance.now();
      if (res.status !== 200 && res.status !== 201) throw new Error(`POST ${path} answered ${res.status}`);
      return { started, answered, body: (await res.json()) as { id: string } };
    };
    const toBob = (await post('/v1/conversations', `contact_id=${demo.contactIds.bob}`)).body.id;
    const sendToBob = async (text: string) => {
      const sent = await post('/v1/messages', `conversation_id=${toBob}&message=${text}`);
      const at =
        arrivals.get(bob)!.get(sent.body.id) ??
        (await new Promise<number>((r) => waiting.set(sent.body.id, () => r(arrivals.get(bob)!.get(sent.body.id)!))));
      return at - sent.started;
    };
    const latencies: number[] = [];
    for (let i = 0; i < messages; i++) latencies.push(await sendToBob(`m${i}`));
    const floor = await streamFloor(stack.env, messages);

    // A burst: BURST_SENDERS requests at a time, none waiting for frames (the contract: a frame within 1 s of the
    // response that caused it, locally), then each frame's delay after its answer.
    let next = 0;
    const burstStarted = performance.now();
    const answeredAt = new Map<string, number>();
    await Promise.all(
      Array.from({ length: BURST_SENDERS }, async () => {
        while (next < BURST_MESSAGES) {
          const sent = await post('/v1/messages', `conversation_id=${toBob}&message=b${next++}`);
          answeredAt.set(sent.body.id, sent.answered);
        }
      }),
    );
    const burstPerSecond = BURST_MESSAGES / ((performance.now() - burstStarted) / 1000);
    for (const until = performance.now() + 60_000; [...answeredAt.keys()].some((id) => !arrivals.get(bob)!.has(id));) {
      if (performance.now() > until) throw new Error('frames of the burst missing after 60 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    const burst = [...answeredAt].map(([id, answered]) => arrivals.get(bob)!.get(id)! - answered);

    // A 1,000-member group (the connected members among them), then 1:1 messages while its fan-out runs.
    await Promise.all(
      Array.from({ length: GROUP_MEMBERS - CLIENTS - 2 }, async (_, i) => {
        const contact = await createContact({ accountId: demo.accountId, username: `member${i}` });
        await addMember(demo.accountId, demo.groupId, contact.id);
      }),
    );
    const toGroup = (await post('/v1/conversations', `group_id=${demo.groupId}`)).body.id;
    const groupSent = await post('/v1/messages', `conversation_id=${toGroup}&message=everyone`);
    const during: number[] = [];
    for (let i = 0; i < DURING_GROUP; i++) during.push(await sendToBob(`d${i}`));
    const lastFrame = async () => {
      for (;;) {
        const times = sockets.map((ws) => arrivals.get(ws)!.get(groupSent.body.id));
        if (times.every((t) => t !== undefined)) return Math.max(...(times as number[]));
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const groupLast = (await lastFrame()) - groupSent.started;
    const [l, f, d, b] = [sorted(latencies), sorted(floor), sorted(during), sorted(burst)];
    return {
      messages,
      clients: CLIENTS,
      p50Ms: percentile(l, 50),
      p99Ms: percentile(l, 99),
      floorP50Ms: percentile(f, 50),
      floorP99Ms: percentile(f, 99),
      groupMembers: GROUP_MEMBERS,
      duringGroupP50Ms: percentile(d, 50),
      duringGroupMaxMs: d.at(-1)!,
      groupLastFrameMs: groupLast,
      burstPerSecond,
      burstP50Ms: percentile(b, 50),
      burstMaxMs: b.at(-1)!,
      burstOver1s: b.filter((ms) => ms > 1000).length,
    };
  } finally {
    for (const ws of sockets) ws.terminate();
    await stack.stop();
  }
}

/** `npm run bench`'s rows: run in a process of its own, as the other latency benchmarks are. */
export function realtimeLatencyRows(): { what: string; value: string }[] {
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'bench/realtime-latency.ts'], { encoding: 'utf8' });
  const r = JSON.parse(out.trim().split('\n').at(-1)!) as RealtimeLatency;
  const ms = (n: number) => `${n.toFixed(0)} ms`;
  return [
    {
      what: `Realtime latency: POST /v1/messages sent → frame at the recipient's socket (${r.messages} messages one at a time, ${r.clients} clients connected)`,
      value: `p50 ${ms(r.p50Ms)} (${(r.p50Ms / r.floorP50Ms).toFixed(2)}x the floor), p99 ${ms(r.p99Ms)} (${(r.p99Ms / r.floorP99Ms).toFixed(2)}x); floor, a \`PutItem\` sent → its record read by a bare stream reader polling as the local runtime does: p50 ${ms(r.floorP50Ms)}, p99 ${ms(r.floorP99Ms)} (target locally: p50 ≤ 150 ms)`,
    },
    {
      what: `Realtime latency under a burst: ${BURST_MESSAGES} messages to one user, ${BURST_SENDERS} requests at a time, from each \`201\` to the recipient's frame`,
      value: `${r.burstPerSecond.toFixed(1)} messages/s; p50 ${ms(r.burstP50Ms)}, worst ${ms(r.burstMaxMs)}, ${r.burstOver1s} of ${BURST_MESSAGES} over 1 s (the contract's 1 s locally)`,
    },
    {
      what: `Realtime latency of a 1:1 message sent while a message to a ${r.groupMembers}-member group fans out`,
      value: `p50 ${ms(r.duringGroupP50Ms)}, worst ${ms(r.duringGroupMaxMs)} (${(r.duringGroupP50Ms / r.p50Ms).toFixed(2)}x the quiet p50); the group message's frame reached the last of its ${r.clients} connected members ${ms(r.groupLastFrameMs)} after it was sent`,
    },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await realtimeLatency()));
  process.exit(0);
}
