/**
 * What the list benches share: the local runtime they run in (its email API
 * only, the bench domains resolving on loopback, mailboxes not probed), and
 * the floor of raw BatchWriteItem of the items a list's addresses become
 * (an email and its address guard each).
 */
import { randomUUID } from 'node:crypto';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import { startDnsServer, type DnsServer } from '../scripts/local/dns-server.ts';
import { startLocalRuntime } from '../scripts/local/runtime.ts';
import { seedDemo } from '../scripts/local/seed.ts';

export interface EmailBench {
  /** The email API's base URL, and the demo user's JSON headers for it. */
  base: string;
  headers: Record<string, string>;
  dns: DnsServer;
  /** Polls the list every 100 ms until it is `completed` or `timeoutMs` has passed; answers it as last read. */
  untilCompleted(listId: number, timeoutMs: number): Promise<ListShown>;
}

/** What the benches read of a list. */
export interface ListShown {
  status: string;
  email_count: number;
}

/** Runs `bench` against a fresh local runtime whose `domains` resolve on loopback; stops it all afterwards. */
export async function withEmailStack<T>(domains: string[], bench: (b: EmailBench) => Promise<T>): Promise<T> {
  const dns = await startDnsServer(benchZones(domains));
  Object.assign(process.env, { DNS_SERVERS: dns.address, ALLOW_PRIVATE_MX: 'true', SMTP_PROBE: 'off' });
  const stack = await startLocalRuntime({ messagingPort: null, emailPort: 0, rateLimits: false });
  try {
    const demo = await seedDemo();
    const base = stack.emailUrl!;
    const headers = { authorization: `Bearer ${demo.token}`, 'content-type': 'application/json' };
    const untilCompleted = async (listId: number, timeoutMs: number) => {
      let current: ListShown = { status: '', email_count: 0 };
      for (const until = performance.now() + timeoutMs; current.status !== 'completed' && performance.now() < until;) {
        current = (await (await fetch(`${base}/api/v1/emailList/${listId}`, { headers })).json()) as ListShown;
        if (current.status !== 'completed') await new Promise((r) => setTimeout(r, 100));
      }
      return current;
    };
    return await bench({ base, headers, dns, untilCompleted });
  } finally {
    await stack.stop();
    await dns.stop();
  }
}

/** The DNS zones of these bench domains: each has one MX host, on loopback. */
function benchZones(domains: string[]) {
  return Object.fromEntries(
    domains.flatMap((d) => [
      [d, { mx: [{ priority: 10, exchange: `mx.${d}` }] }],
      [`mx.${d}`, { a: ['127.0.0.1'] }],
    ]),
  );
}

/** Seconds to write 2 × `addresses` items shaped like stored emails, 25 per BatchWriteItem, one call at a time. */
export async function batchWriteFloorSeconds(addresses: number, domains: number): Promise<number> {
  const run = randomUUID();
  const items = Array.from({ length: 2 * addresses }, (_, i) => ({
    pk: `FLOOR#${run}#${i}`,
    sk: 'EMAIL',
    gsi1pk: `FLOOR#${run}#MEMBERS`,
    gsi1sk: String(i).padStart(15, '0'),
    email: `user${i}@d${i % domains}.bench`,
    status: 'pending',
    created_at: Math.floor(Date.now() / 1000),
  }));
  const started = performance.now();
  await rawBatchPuts(items);
  return (performance.now() - started) / 1000;
}

/** Raw BatchWriteItem of `items`, 25 a call, one call at a time, until none is left unprocessed: the floors' kind of write. */
export async function rawBatchPuts(items: Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < items.length; i += 25) {
    let pending = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    while (pending.length) {
      const out = await db().send(new BatchWriteCommand({ RequestItems: { [tableName()]: pending } }));
      pending = (out.UnprocessedItems?.[tableName()] as typeof pending | undefined) ?? [];
    }
  }
}
