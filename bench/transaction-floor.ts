/**
 * The floor of a send's latency on DynamoDB Local: bare TransactWriteItems
 * of as many small new items as a one-to-one send's transaction holds,
 * made by `clients` callers at once for `seconds`, on the table the
 * benchmark's runtime uses. DynamoDB Local runs transactions one at a
 * time, so under load their latency grows with their item count: the
 * send's p50 cannot go below this whatever the handler does.
 */
import { randomUUID } from 'node:crypto';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';

export async function transactionFloorP50(items: number, clients: number, seconds: number): Promise<number> {
  const run = randomUUID();
  let n = 0;
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        const started = performance.now();
        await db().send(
          new TransactWriteCommand({
            TransactItems: Array.from({ length: items }, () => ({
              Put: {
                TableName: tableName(),
                Item: { pk: `FLOOR#${run}#${n++}`, sk: 'TX', gsi2pk: `FLOOR#${run}`, gsi2sk: String(n), body: 'x'.repeat(300) },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            })),
          }),
        );
        latencies.push(performance.now() - started);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return latencies[Math.floor(latencies.length / 2)] ?? 0;
}
