import { randomUUID } from 'node:crypto';
import { DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import { emailKeys, pad } from '#shared/db/keys';

/**
 * The transactional outbox: the same transaction that stores emails stores
 * one outbox item naming them. It is deleted once the work is on the queue;
 * one left behind (a crash between the two) is re-sent by the sweeper. An
 * outbox "awaiting" credits sits in its own index until credits arrive.
 */
export interface OutboxItem {
  account_id: string;
  outbox_id: string;
  email_ids: number[];
  created_at_ms: number;
  awaiting: boolean;
}

export function outboxPut(accountId: string, emailIds: number[], awaiting: boolean) {
  const now = Date.now();
  const item: OutboxItem = { account_id: accountId, outbox_id: randomUUID(), email_ids: emailIds, created_at_ms: now, awaiting };
  const index = awaiting
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

const toOutbox = (i: Record<string, unknown>): OutboxItem => ({
  account_id: i.account_id as string,
  outbox_id: i.outbox_id as string,
  email_ids: (i.email_ids as number[]).map(Number),
  created_at_ms: Number(i.created_at_ms),
  awaiting: i.awaiting === true,
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
