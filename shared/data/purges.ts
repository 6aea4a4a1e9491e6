import { DeleteCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { TransactItems } from '#shared/db/batch';
import { db, tableName } from '#shared/db/client';
import { keys } from '#shared/db/keys';

/** Deleting a parent removes it at once and its children in batches (see shared/purge.ts). */
export type PurgeJob =
  | { kind: 'purge-conversation'; accountId: string; contactId: string; conversationId: string }
  | { kind: 'purge-list'; accountId: string; listId: number };

const parentOf = (job: PurgeJob) => (job.kind === 'purge-conversation' ? `CONV#${job.conversationId}` : `LIST#${job.listId}`);
const keyOf = (job: PurgeJob) => keys.purge(job.accountId, parentOf(job));

/**
 * Transaction part written with the parent's delete: the purge is then on
 * record however the request ends, and the sweeper finishes what it left.
 */
export function purgeRecordPut(job: PurgeJob): TransactItems[number] {
  const now = Date.now();
  return { Put: { TableName: tableName(), Item: { ...keyOf(job), ...keys.purgePending(now), type: 'purge', job, created_at_ms: now } } };
}

export async function purgeStartedAt(job: PurgeJob): Promise<number | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keyOf(job), ConsistentRead: true }));
  return out.Item ? Number(out.Item.created_at_ms) : undefined;
}

export async function deletePurgeRecord(job: PurgeJob): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: keyOf(job) }));
}

/** Purges started before `beforeMs` and not yet finished, oldest first. */
export async function unfinishedPurges(beforeMs: number, limit = 100): Promise<PurgeJob[]> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk < :before',
      ExpressionAttributeValues: { ':pk': keys.purgePendingPartition, ':before': keys.purgePending(beforeMs).gsi2sk },
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((item) => item.job as PurgeJob);
}
