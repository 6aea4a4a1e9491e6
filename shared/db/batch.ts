import { BatchGetCommand, BatchWriteCommand, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import { cancellationCodes } from '#shared/db/errors';
import { CHANGED_MS, stamp, type Condition, type Update } from '#shared/db/expression';
import type { Key, KeyedItem } from '#shared/db/items';
import { backoff, retryOnConflict } from '#shared/db/retry';

const chunks = <T>(list: T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(list.length / size) }, (_, i) => list.slice(i * size, i * size + size));

/** Unprocessed keys are retried with backoff this many times before the call fails. */
const MAX_BATCH_ATTEMPTS = 8;

/** BatchGet of any number of keys, retrying unprocessed keys. */
export async function batchGet(keyList: Key[], consistent = false): Promise<Record<string, unknown>[]> {
  const unique = [...new Map(keyList.map((k) => [`${k.pk}|${k.sk}`, k])).values()];
  const found: Record<string, unknown>[] = [];
  for (const chunk of chunks(unique, 100)) {
    let pending: Key[] = chunk;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt >= MAX_BATCH_ATTEMPTS) throw new Error(`BatchGetItem left ${pending.length} keys unprocessed`);
      if (attempt > 0) await backoff(attempt);
      const out = await db().send(new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: pending, ConsistentRead: consistent } } }));
      found.push(...(out.Responses?.[tableName()] ?? []));
      pending = (out.UnprocessedKeys?.[tableName()]?.Keys as Key[] | undefined) ?? [];
    }
  }
  return found;
}

/** BatchWrite deletes, 25 at a time, retrying unprocessed items. */
export const batchDelete = (keyList: Key[]) => batchWrite(keyList.map((Key) => ({ DeleteRequest: { Key } })));

/** BatchWrite puts (unconditional), 25 at a time, retrying unprocessed items. */
export const batchPut = (items: KeyedItem[]) => batchWrite(items.map((Item) => ({ PutRequest: { Item } })));

type WriteRequest = { DeleteRequest: { Key: Key } } | { PutRequest: { Item: Record<string, unknown> } };

/** Batches of one write run this many at a time. */
const PARALLEL_BATCHES = 4;

async function batchWrite(requests: WriteRequest[]): Promise<void> {
  const pending = chunks(requests, 25);
  await Promise.all(
    Array.from({ length: Math.min(PARALLEL_BATCHES, pending.length) }, async () => {
      for (let chunk = pending.shift(); chunk; chunk = pending.shift()) await writeBatch(chunk);
    }),
  );
}

async function writeBatch(chunk: WriteRequest[]): Promise<void> {
  const at = Date.now();
  let pending = chunk.map((r) => ('PutRequest' in r ? { PutRequest: { Item: { ...r.PutRequest.Item, [CHANGED_MS]: at } } } : r));
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt >= MAX_BATCH_ATTEMPTS) throw new Error(`BatchWriteItem left ${pending.length} items unprocessed`);
    if (attempt > 0) await backoff(attempt);
    const out = await db().send(new BatchWriteCommand({ RequestItems: { [tableName()]: pending } }));
    pending = (out.UnprocessedItems?.[tableName()] as typeof pending | undefined) ?? [];
  }
}

/** DynamoDB's limit on the items of one TransactWriteItems. */
export const TRANSACTION_MAX_ITEMS = 100;

/** One item of a transaction; built by the helpers below, which name the table. */
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
export type TransactItems = TransactItem[];

/** Puts and updates carry their time (CHANGED_MS in expression.ts): when built, unless the transaction names one. */
export const txPut = (item: KeyedItem, when?: Condition): TransactItem => ({
  Put: { TableName: tableName(), Item: { ...item, [CHANGED_MS]: Date.now() }, ...when?.input() },
});
export const txUpdate = (key: Key, changes: Update): TransactItem => ({ Update: { TableName: tableName(), Key: key, ...changes.input() } });
export const txDelete = (key: Key, when?: Condition): TransactItem => ({ Delete: { TableName: tableName(), Key: key, ...when?.input() } });
export const txCheck = (key: Key, when: Condition): TransactItem => {
  const { ConditionExpression, ...rest } = when.input();
  return { ConditionCheck: { TableName: tableName(), Key: key, ConditionExpression: ConditionExpression!, ...rest } };
};

/**
 * TransactWrite, retried (retryOnConflict) when DynamoDB cancels it only
 * because another transaction touched the same item (TransactionConflict),
 * which is routine under concurrent sends to one conversation. `at`: the
 * time every item's change carries, when it must be one the caller chose
 * (a new message's items carry the message's own creation time).
 */
export async function transactWrite(input: TransactWriteCommandInput, tries?: number, at?: number): Promise<void> {
  const stamped =
    at === undefined
      ? input
      : {
          ...input,
          TransactItems: input.TransactItems?.map((item) => ({
            ...item,
            ...(item.Put ? { Put: stamp(item.Put, at) } : {}),
            ...(item.Update ? { Update: stamp(item.Update, at) } : {}),
          })),
        };
  await retryOnConflict(
    async () => {
      await db().send(new TransactWriteCommand(stamped));
    },
    { tries },
  );
}

/** Transaction items addressed by name, so a cancellation's reasons never depend on their order. */
export type NamedItems = [name: string, item: TransactItem][];

/** Names a list of parts `prefix:0`, `prefix:1`, … */
export const namedParts = (prefix: string, items: TransactItems): NamedItems => items.map((item, i) => [`${prefix}:${i}`, item]);

/**
 * Runs a transaction (conflicts retried as above, `tries` times in all).
 * Resolves to the names of the items whose condition failed, empty when it
 * committed.
 */
export async function transactNamed(items: NamedItems, tries?: number, at?: number): Promise<string[]> {
  try {
    await transactWrite({ TransactItems: items.map(([, item]) => item) }, tries, at);
    return [];
  } catch (error) {
    const codes = cancellationCodes(error);
    if (!codes?.includes('ConditionalCheckFailed')) throw error;
    return items.filter((_, i) => codes[i] === 'ConditionalCheckFailed').map(([name]) => name);
  }
}
