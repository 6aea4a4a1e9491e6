import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { newNumericIds, resetNumericIds } from '#shared/data/numeric-ids';
import { db, tableName } from '#shared/db/client';
import { emailKeys } from '#shared/db/keys';

const slotOf = (id: number) => Math.floor((id % 4096) / 16);

describe('numeric ids against DynamoDB Local', () => {
  it('are strictly increasing, above a given floor, and exact JSON numbers', async () => {
    const ids = await newNumericIds(200);
    expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!)).toBe(true);
    expect(ids.every(Number.isSafeInteger)).toBe(true);
    const floor = ids.at(-1)! + 10 * 4096 * 1000; // ten seconds "ahead", e.g. from a container with a fast clock
    const [next] = await newNumericIds(1, floor);
    expect(next).toBeGreaterThan(floor);
  });

  it('never gives a leased slot to a second container', async () => {
    const [mine] = await newNumericIds(1);
    const slot = slotOf(mine!);
    const lease = await db().send(new GetCommand({ TableName: tableName(), Key: emailKeys.idSlot(slot), ConsistentRead: true }));
    expect(lease.Item?.lease_until).toBeGreaterThan(Date.now());

    // Another container (simulated: this one forgets its lease) must take a different slot.
    resetNumericIds();
    const [theirs] = await newNumericIds(1);
    expect(slotOf(theirs!)).not.toBe(slot);

  });
});
