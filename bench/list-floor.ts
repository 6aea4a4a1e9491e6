/**
 * What the list benches share: the floor of raw BatchWriteItem of the items
 * a list's addresses become (an email and its address guard each), and the
 * loopback DNS zones their domains resolve in.
 */
import { randomUUID } from 'node:crypto';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';

/** The DNS zones of these bench domains: each has one MX host, on loopback. */
export function benchZones(domains: string[]) {
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
  for (let i = 0; i < items.length; i += 25) {
    let pending = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    while (pending.length) {
      const out = await db().send(new BatchWriteCommand({ RequestItems: { [tableName()]: pending } }));
      pending = (out.UnprocessedItems?.[tableName()] as typeof pending | undefined) ?? [];
    }
  }
  return (performance.now() - started) / 1000;
}
