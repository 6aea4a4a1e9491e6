/**
 * What the list path's kinds of write cost on DynamoDB Local, each as a
 * ratio to BatchWriteItem of as many items (the throughput floor's kind),
 * in rounds of 100 items taken in turn on one DynamoDB Local, with the
 * runtime's stream consumers reading its changes, as the list bench runs:
 *   - batch: BatchWriteItem, 25 puts a call, one call at a time (1.00);
 *   - transactions: 2 × TransactWriteItems of 50 conditional puts at once (an add's guards);
 *   - single puts: 100 conditional PutItems, 10 at a time.
 * Whether a write leaves the transactions for single conditional puts
 * would change the list path's figure locally (docs/data-model.md, "Round
 * trips and write units per 100-address add").
 */
import { randomUUID } from 'node:crypto';
import { PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import { rawBatchPuts, withEmailStack } from './list-floor.ts';

const ITEMS = 100;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 31);

const items = () => {
  const run = randomUUID();
  return Array.from({ length: ITEMS }, (_, i) => ({
    pk: `WRITES#${run}#${i}`,
    sk: 'GUARD',
    gsi1pk: `WRITES#${run}`,
    gsi1sk: String(i).padStart(15, '0'),
    email: `user${i}@d${i % 50}.bench`,
  }));
};

const kinds: Record<string, () => Promise<void>> = {
  batch: () => rawBatchPuts(items()),
  transactions: async () => {
    const all = items();
    await Promise.all(
      [all.slice(0, 50), all.slice(50)].map((part) =>
        db().send(
          new TransactWriteCommand({
            TransactItems: part.map((Item) => ({ Put: { TableName: tableName(), Item, ConditionExpression: 'attribute_not_exists(pk)' } })),
          }),
        ),
      ),
    );
  },
  'single puts': async () => {
    const all = items();
    let next = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (next < all.length) {
          const Item = all[next++]!;
          await db().send(new PutCommand({ TableName: tableName(), Item, ConditionExpression: 'attribute_not_exists(pk)' }));
        }
      }),
    );
  },
};

const timed = async (write: () => Promise<void>) => {
  const started = performance.now();
  await write();
  return performance.now() - started;
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function writeKinds(): Promise<Record<string, number>> {
  return withEmailStack([], async () => {
    // DynamoDB Local's JVM is several times slower until warm.
    for (let i = 0; i < 10; i++) for (const write of Object.values(kinds)) await write();
    const ratios: Record<string, number[]> = Object.fromEntries(Object.keys(kinds).map((k) => [k, []]));
    for (let round = 0; round < ROUNDS; round++) {
      // Each kind paired with a batch of its own, the order alternating.
      for (const [name, write] of Object.entries(kinds)) {
        let floor: number, kind: number;
        if (round % 2) [floor, kind] = [await timed(kinds.batch!), await timed(write)];
        else [kind, floor] = [await timed(write), await timed(kinds.batch!)];
        ratios[name]!.push(kind / floor);
      }
    }
    return Object.fromEntries(Object.entries(ratios).map(([name, r]) => [name, median(r)]));
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.env.LOG_LEVEL ??= 'silent';
  const result = await writeKinds();
  console.log(`| ${ITEMS} items as | over BatchWriteItem (median of ${ROUNDS} paired rounds) |\n|---|---|`);
  for (const [name, ratio] of Object.entries(result)) console.log(`| ${name} | ${ratio.toFixed(2)} |`);
  process.exit(0);
}
