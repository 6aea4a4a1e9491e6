import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import { isConditionFailure } from '#shared/db/errors';
import { CHANGED_MS, condition, type Condition, type Update } from '#shared/db/expression';
import type { IndexName } from '#shared/db/table-definition';

/**
 * Single-item reads and writes and queries of the one table: the only
 * place (with batch.ts, and scan.ts for the migrations) that names the
 * table or builds a command.
 */
export type Key = { pk: string; sk: string };
export type Item = Record<string, unknown>;
export type KeyedItem = Key & Item;

export async function getItem(key: Key, consistent = false): Promise<Item | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: key, ...(consistent ? { ConsistentRead: true } : {}) }));
  return out.Item;
}

/**
 * `oldOnFailure`: a failed condition's error carries the item as it was
 * (`oldItemOf` in errors.ts), so the caller learns why without a second read.
 */
export interface WriteOptions {
  oldOnFailure?: boolean;
}
const onFailure = (options: WriteOptions) => (options.oldOnFailure ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {});

/** Every Put and Update carries its time (CHANGED_MS in expression.ts): now, unless `at` says. */
export async function putItem(item: KeyedItem, when?: Condition, at = Date.now(), options: WriteOptions = {}): Promise<void> {
  await db().send(new PutCommand({ TableName: tableName(), Item: { ...item, [CHANGED_MS]: at }, ...when?.input(), ...onFailure(options) }));
}

/** Stores a new item; the condition turns an (astronomically unlikely) id collision into an error, not an overwrite. */
export const putNew = (item: KeyedItem) => putItem(item, condition`attribute_not_exists(pk)`);

/** Applies the update; resolves to the attributes `returnValues` asks for (none without it). */
export async function updateItem(
  key: Key,
  changes: Update,
  returnValues?: 'ALL_NEW' | 'UPDATED_NEW' | 'UPDATED_OLD',
  at = Date.now(),
  options: WriteOptions = {},
): Promise<Item> {
  const out = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: key,
      ...changes.input(at),
      ...(returnValues ? { ReturnValues: returnValues } : {}),
      ...onFailure(options),
    }),
  );
  return out.Attributes ?? {};
}

export async function deleteItem(key: Key, when?: Condition): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: key, ...when?.input() }));
}

/** A conditional write's result, or undefined when its condition failed (any other error propagates). */
export async function unlessConditionFails<T>(write: Promise<T>): Promise<T | undefined> {
  try {
    return await write;
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** Whether a conditional write went through. */
export const conditionHeld = async (write: Promise<unknown>): Promise<boolean> =>
  (await unlessConditionFails(write.then(() => true))) ?? false;

export interface Query {
  /** Absent: the table itself, read strongly consistent. */
  index?: IndexName;
  partition: string;
  /** A condition on the sort key. */
  sort?: [op: '<' | '<=' | '>' | '>=', value: string] | [op: 'begins_with', prefix: string] | [op: 'between', low: string, high: string];
  /** Descending sort-key order when false. */
  forward?: boolean;
  projection?: string;
}

/**
 * Up to `wanted` items of a Query, in its order. More than one call (at
 * most `maxCalls`) only when the items pass DynamoDB's 1 MB per response.
 */
export async function query(q: Query, wanted: number, maxCalls = Number.POSITIVE_INFINITY): Promise<Item[]> {
  const prefix = q.index ?? '';
  const values: Item = { ':pk': q.partition };
  let keyCondition = `${prefix}pk = :pk`;
  if (q.sort) {
    const [op, value] = q.sort;
    values[':sk'] = value;
    if (q.sort[0] === 'between') values[':sk2'] = q.sort[2];
    keyCondition +=
      op === 'begins_with'
        ? ` AND begins_with(${prefix}sk, :sk)`
        : op === 'between'
          ? ` AND ${prefix}sk BETWEEN :sk AND :sk2`
          : ` AND ${prefix}sk ${op} :sk`;
  }
  const items: Item[] = [];
  let startKey: Item | undefined;
  for (let calls = 0; calls < maxCalls; calls++) {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        ...(q.index ? { IndexName: q.index } : { ConsistentRead: true }),
        KeyConditionExpression: keyCondition,
        ExpressionAttributeValues: values,
        ...(q.forward === false ? { ScanIndexForward: false } : {}),
        ...(q.projection ? { ProjectionExpression: q.projection } : {}),
        Limit: wanted - items.length,
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(out.Items ?? []));
    startKey = out.LastEvaluatedKey;
    if (!startKey || items.length >= wanted) break;
  }
  return items;
}
