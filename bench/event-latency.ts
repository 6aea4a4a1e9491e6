/**
 * Webhook event latency under `npm start`'s runtime: from the response of
 * the request that committed a change to the first delivery attempt of its
 * event reaching a loopback receiver (the change stream poll, the stream
 * consumer, the webhooks queue, the delivery worker). One event at a time,
 * EVENTS of them; p50 and p99. Run alone with `npx tsx bench/event-latency.ts`
 * (prints one JSON line); `npm run bench` includes it.
 */
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { createWebhook } from '#shared/webhooks/subscribe';
import { startLocalRuntime } from '../scripts/local/runtime.ts';
import { seedDemo } from '../scripts/local/seed.ts';

process.env.LOG_LEVEL ??= 'silent';
const EVENTS = Number(process.env.BENCH_EVENTS ?? 200);

export interface EventLatency {
  events: number;
  p50Ms: number;
  p99Ms: number;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

export async function eventLatency(events = EVENTS): Promise<EventLatency> {
  const stack = await startLocalRuntime({ messagingPort: 0, emailPort: null });
  let arrived: ((at: number) => void) | undefined;
  const receiver = http.createServer((req, res) => {
    const at = performance.now();
    req.resume();
    req.on('end', () => {
      res.statusCode = 204;
      res.end();
      arrived?.(at);
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  try {
    const demo = await seedDemo();
    const auth = { authorization: `Bearer ${demo.token}`, 'content-type': 'application/x-www-form-urlencoded' };
    const conv = (await (
      await fetch(`${stack.messagingUrl}/v1/conversations`, { method: 'POST', headers: auth, body: `contact_id=${demo.contactIds.bob}` })
    ).json()) as { id: string };
    const port = (receiver.address() as { port: number }).port;
    await createWebhook(demo.accountId, `http://127.0.0.1:${port}/`, ['conversation.updated']);
    const latencies: number[] = [];
    for (let i = 0; i < events; i++) {
      // Each toggle of is_muted is one conversation.updated event.
      const next = new Promise<number>((resolve) => (arrived = resolve));
      const res = await fetch(`${stack.messagingUrl}/v1/conversations/${conv.id}`, {
        method: 'PUT',
        headers: auth,
        body: `is_muted=${i % 2 === 0}`,
      });
      const answered = performance.now();
      if (res.status !== 200) throw new Error(`PUT answered ${res.status}`);
      await res.arrayBuffer();
      latencies.push((await next) - answered);
    }
    latencies.sort((a, b) => a - b);
    return { events, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) };
  } finally {
    await new Promise((r) => receiver.close(r));
    await stack.stop();
  }
}

/** `npm run bench`'s row: run in a process of its own, as the email benchmark is. */
export function eventLatencyRows(): { what: string; value: string }[] {
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'bench/event-latency.ts'], { encoding: 'utf8' });
  const l = JSON.parse(out.trim().split('\n').at(-1)!) as EventLatency;
  return [
    {
      what: `Webhook event latency: response → first delivery attempt at a loopback receiver (${l.events} events, one at a time)`,
      value: `p50 ${l.p50Ms.toFixed(0)} ms, p99 ${l.p99Ms.toFixed(0)} ms (target locally: p50 ≤ 1 s); per event 1 Query (the account's endpoints; a message event also 1 GetItem and 1 BatchGetItem), per attempt 1 Query and 1 PutItem (1 WCU)`,
    },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await eventLatency()));
  process.exit(0);
}
