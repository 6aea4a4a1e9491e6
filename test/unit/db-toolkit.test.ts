import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { attr, condition, stamp, update } from '#shared/db/expression';
import { parseItem } from '#shared/db/item-schema';
import { AGAIN, retryOnConflict } from '#shared/db/retry';

const conflict = () =>
  Object.assign(new Error('cancelled'), {
    name: 'TransactionCanceledException',
    CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }],
  });

describe('update and condition expressions', () => {
  it('own their placeholders: one per value, one per attribute name however often it is used', () => {
    // Given an update with reserved words, a repeated name and several values
    const status = attr('status');
    const write = update().set`${status} = ${'processing'}, updated_at = ${7}`.add`${attr('k_3')} ${-1}`.remove`work_started_at`
      .when`${status} = ${'pending'}`.when`attribute_exists(pk)`;
    // When it is turned into command fields, at a given time
    const input = write.input(1_795_760_272_345);
    // Then every value and name has its own placeholder, and the clauses read in DynamoDB's grammar,
    // with the write's time stamped through placeholders of the stamp's own
    expect(input).toEqual({
      UpdateExpression: 'SET #n0 = :v1, updated_at = :v2, #changed_ms = :changed_ms REMOVE work_started_at ADD #n3 :v4',
      ConditionExpression: '#n0 = :v5 AND attribute_exists(pk)',
      ExpressionAttributeNames: { '#n0': 'status', '#n3': 'k_3', '#changed_ms': 'changed_ms' },
      ExpressionAttributeValues: { ':v1': 'processing', ':v2': 7, ':v4': -1, ':v5': 'pending', ':changed_ms': 1_795_760_272_345 },
    });
  });

  it('stamp every write with its time, and let a transaction name it', () => {
    // Given an update with only an ADD, and a put
    const write = update().add`n ${1}`.input(5);
    const put = { TableName: 't', Item: { pk: 'a', sk: 'b', changed_ms: 1 } };
    // When a transaction stamps them with its own time
    // Then the update's stamp value and the put's attribute carry it, and nothing else moves
    expect(write.UpdateExpression).toBe('SET #changed_ms = :changed_ms ADD n :v0');
    expect(stamp(write, 9).ExpressionAttributeValues).toEqual({ ':v0': 1, ':changed_ms': 9 });
    expect(stamp(put, 9)).toEqual({ TableName: 't', Item: { pk: 'a', sk: 'b', changed_ms: 9 } });
    // And a condition check (no item, no stamp placeholder) is left as it is
    const check = { TableName: 't', ...condition`attribute_exists(pk) AND n = ${1}`.input() };
    expect(stamp(check, 9)).toBe(check);
  });

  it('leaves out what a condition does not use', () => {
    expect(condition`attribute_not_exists(pk)`.input()).toEqual({ ConditionExpression: 'attribute_not_exists(pk)' });
  });
});

describe('retryOnConflict', () => {
  it('tries again after a stale read or a transaction conflict, and stops at the cap', async () => {
    // Given an attempt that always finds its read stale
    let tries = 0;
    // When it runs under a cap of 3 tries
    const result = await retryOnConflict(async () => (tries++, AGAIN), { tries: 3, exhausted: () => 'gave up' });
    // Then it was tried 3 times and the exhausted answer is returned
    expect(tries).toBe(3);
    expect(result).toBe('gave up');
    // And a conflict that clears on the second try succeeds then
    let conflicts = 0;
    expect(await retryOnConflict(async () => (conflicts++ === 0 ? Promise.reject(conflict()) : 'done'))).toBe('done');
    expect(conflicts).toBe(2);
  });

  it('throws the last conflict past the cap, and any other error at once', async () => {
    let tries = 0;
    await expect(retryOnConflict(async () => (tries++, Promise.reject(conflict())), { tries: 2 })).rejects.toThrow('cancelled');
    expect(tries).toBe(2);
    let failures = 0;
    await expect(retryOnConflict(async () => (failures++, Promise.reject(new Error('boom'))))).rejects.toThrow('boom');
    expect(failures).toBe(1);
  });
});

describe('parseItem', () => {
  const schema = v.object({ id: v.string(), note: v.optional(v.string()), count: v.optional(v.number(), 0) });

  it('keeps what the schema names: unknown attributes left out, an absent optional one absent, a default filled in', () => {
    // Given a stored item with its keys and type beside its fields, and no note
    const item = { pk: 'P', sk: 'S', type: 'thing', id: 'a' };
    // When it is parsed, then only the schema's fields remain, and note is not even an undefined key
    const parsed = parseItem(schema, item);
    expect(parsed).toStrictEqual({ id: 'a', count: 0 });
    expect('note' in parsed).toBe(false);
  });

  it('throws on an item that does not match, naming the attribute at fault', () => {
    expect(() => parseItem(schema, { id: 'a', count: 'many' })).toThrow(/at count: expected number$/);
    // Never the stored value itself: it may be an address or a message, and errors reach the logs.
    expect(() => parseItem(schema, { id: 'a', count: 'many' })).not.toThrow(/many/);
    expect(() => parseItem(schema, { note: 'x' })).toThrow(/at id: /);
  });
});
