import { DeleteCommand, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '#shared/data/errors';
import type { TransactItems } from '#shared/db/batch';
import { db, tableName } from '#shared/db/client';
import { keys } from '#shared/db/keys';

/** Deleting a parent removes it at once and its children in batches (see shared/purge.ts). */
export type PurgeJob = (
  | { kind: 'purge-conversation'; accountId: string; contactId: string; conversationId: string }
  | { kind: 'purge-list'; accountId: string; listId: number }
) & {
  /** The chain of messages working on it: one at a time holds the purge's lease. */
  chain?: string;
};

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

/** How long a chain holds a purge after each claim: longer than one hop (a worker run plus the queue's delivery). */
export const PURGE_LEASE_MS = 3 * 60_000;

/**
 * Claims (or renews) the purge for `chain`: at most one chain works on a
 * purge at a time. False when another chain holds an unexpired lease, or
 * the purge is finished (no record).
 */
export async function claimPurge(job: PurgeJob, chain: string): Promise<boolean> {
  const now = Date.now();
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keyOf(job),
        UpdateExpression: 'SET lease_owner = :chain, lease_until = :until',
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(lease_until) OR lease_until < :now OR lease_owner = :chain)',
        ExpressionAttributeValues: { ':chain': chain, ':until': now + PURGE_LEASE_MS, ':now': now },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** A chain that found nothing left but must wait for the settle time lets the sweeper take the purge up again. */
export async function releasePurge(job: PurgeJob, chain: string): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keyOf(job),
        UpdateExpression: 'REMOVE lease_owner, lease_until',
        ConditionExpression: 'lease_owner = :chain',
        ExpressionAttributeValues: { ':chain': chain },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

export async function deletePurgeRecord(job: PurgeJob): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: keyOf(job) }));
}

/** Purges started before `beforeMs`, not yet finished, and with no chain holding them, oldest first. */
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
  const now = Date.now();
  return (out.Items ?? []).filter((item) => !(Number(item.lease_until) >= now)).map((item) => item.job as PurgeJob);
}
