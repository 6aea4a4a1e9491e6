import { randomUUID } from 'node:crypto';
import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '#shared/data/errors';
import { batchDelete, batchPut } from '#shared/db/batch';
import { db, tableName } from '#shared/db/client';
import { emailKeys, pad } from '#shared/db/keys';
import { newDeltaToken, type Deltas, type Key } from '#shared/data/collections';

/**
 * The transactional outbox: the same transaction that stores emails (or a
 * list) stores one outbox item naming the work for the queue and the counts
 * the collection still has to take in. It is deleted once both are done;
 * one left behind (a crash in between) is finished by the sweeper. An
 * outbox "awaiting" credits sits in its own index until credits arrive.
 */
export interface OutboxItem {
  account_id: string;
  outbox_id: string;
  email_ids: number[];
  /** The emails' addresses and sequence numbers (same order), list and creation time: the worker gets them with the work. */
  addresses?: string[];
  seqs?: number[];
  list_id?: number | null;
  emails_created_at?: number;
  created_at_ms: number;
  awaiting: boolean;
  /** Counts for the collection, applied exactly once under `token`; absent once applied. */
  collection: Key;
  collection_must_exist: boolean;
  token: string;
  deltas?: Deltas;
}

export interface OutboxInput {
  emailIds: number[];
  addresses?: string[];
  seqs?: number[];
  listId?: number | null;
  emailsCreatedAt?: number;
  awaiting: boolean;
  collection: Key;
  mustExist: boolean;
  deltas: Deltas;
}

export function outboxPut(accountId: string, input: OutboxInput) {
  const now = Date.now();
  const item: OutboxItem = {
    account_id: accountId,
    outbox_id: randomUUID(),
    email_ids: input.emailIds,
    ...(input.addresses
      ? { addresses: input.addresses, seqs: input.seqs, list_id: input.listId ?? null, emails_created_at: input.emailsCreatedAt }
      : {}),
    created_at_ms: now,
    awaiting: input.awaiting,
    collection: input.collection,
    collection_must_exist: input.mustExist,
    token: newDeltaToken(),
    deltas: input.deltas,
  };
  const index = input.awaiting
    ? { ...emailKeys.outboxAwaiting(accountId, now), gsi1pk: emailKeys.outboxAwaitingAll, gsi1sk: pad(now) }
    : emailKeys.outboxReady(item.outbox_id, now);
  return {
    item,
    put: { TableName: tableName(), Item: { ...emailKeys.outbox(accountId, item.outbox_id), type: 'outbox', ...index, ...item } },
  };
}

export async function deleteOutbox(item: OutboxItem): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: emailKeys.outbox(item.account_id, item.outbox_id) }));
}

/**
 * An outbox whose work is queued stays as the marker of that work: it moves
 * to the due index (its counts, applied, are dropped), and the recovery pass
 * looks at its emails once it comes due. So a lost message is found from
 * one item per chunk, not one index entry per email.
 */
export const DUE_AFTER_MS = 30 * 60_000;

export async function markDispatched(items: OutboxItem[], dueMs = Date.now() + DUE_AFTER_MS): Promise<void> {
  const puts = items.map((item) => {
    const { deltas: _applied, ...kept } = item;
    return { ...emailKeys.outbox(item.account_id, item.outbox_id), type: 'outbox', ...emailKeys.outboxDue(item.outbox_id, dueMs), ...kept };
  });
  if (puts.length === 1) await db().send(new PutCommand({ TableName: tableName(), Item: puts[0]! }));
  else if (puts.length) await batchPut(puts);
}

/** Queued outboxes that came due before `beforeMs`: their emails should be finished by now. */
export async function dueOutboxes(beforeMs: number, limit = 100): Promise<OutboxItem[]> {
  const shards = await Promise.all(emailKeys.outboxDuePartitions().map((partition) => queryIndex('gsi2', partition, beforeMs, limit)));
  return shards.flat();
}

export async function deleteOutboxes(items: OutboxItem[]): Promise<void> {
  if (items.length === 0) return;
  if (items.length === 1) return deleteOutbox(items[0]!);
  await batchDelete(items.map((o) => emailKeys.outbox(o.account_id, o.outbox_id)));
}

/** A held outbox keeps its work but no longer its counts, once they are applied. */
export async function dropOutboxDeltas(item: OutboxItem): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: emailKeys.outbox(item.account_id, item.outbox_id),
        UpdateExpression: 'REMOVE deltas',
        ConditionExpression: 'attribute_exists(pk)',
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

const toOutbox = (i: Record<string, unknown>): OutboxItem => ({
  account_id: i.account_id as string,
  outbox_id: i.outbox_id as string,
  email_ids: (i.email_ids as number[]).map(Number),
  ...(Array.isArray(i.addresses)
    ? {
        addresses: i.addresses as string[],
        seqs: (i.seqs as number[] | undefined)?.map(Number),
        list_id: i.list_id === null || i.list_id === undefined ? null : Number(i.list_id),
        emails_created_at: i.emails_created_at === undefined ? undefined : Number(i.emails_created_at),
      }
    : {}),
  created_at_ms: Number(i.created_at_ms),
  awaiting: i.awaiting === true,
  collection: i.collection as Key,
  collection_must_exist: i.collection_must_exist === true,
  token: i.token as string,
  ...(i.deltas ? { deltas: i.deltas as Deltas } : {}),
});

async function queryIndex(index: 'gsi1' | 'gsi2', partition: string, beforeMs: number, limit: number) {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: index,
      KeyConditionExpression: `${index}pk = :pk AND ${index}sk < :before`,
      ExpressionAttributeValues: { ':pk': partition, ':before': pad(beforeMs) },
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map(toOutbox);
}

/** Outboxes that should have been sent by now (their request crashed or lost the queue). */
export async function strandedOutboxes(olderThanMs: number, limit = 100): Promise<OutboxItem[]> {
  const shards = await Promise.all(
    emailKeys.outboxReadyPartitions().map((partition) => queryIndex('gsi2', partition, Date.now() - olderThanMs, limit)),
  );
  return shards.flat();
}

/** One account's work waiting for credits, oldest first. */
export const awaitingOutboxes = (accountId: string, limit = 100) =>
  queryIndex('gsi2', emailKeys.outboxAwaitingPartition(accountId), Date.now() + 1, limit);

/** Every account's work waiting for credits (the sweeper retries them). */
export const allAwaitingOutboxes = (limit = 100) => queryIndex('gsi1', emailKeys.outboxAwaitingAll, Date.now() + 1, limit);

/** Transaction part: an awaiting outbox becomes ready to send. */
export const outboxReadyUpdate = (item: OutboxItem) => {
  const ready = emailKeys.outboxReady(item.outbox_id, item.created_at_ms);
  return {
    TableName: tableName(),
    Key: emailKeys.outbox(item.account_id, item.outbox_id),
    UpdateExpression: 'SET gsi2pk = :pk, gsi2sk = :sk, awaiting = :false REMOVE gsi1pk, gsi1sk',
    ConditionExpression: 'awaiting = :true',
    ExpressionAttributeValues: { ':pk': ready.gsi2pk, ':sk': ready.gsi2sk, ':false': false, ':true': true },
  };
};
