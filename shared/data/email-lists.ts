import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { transactNamed, transactWrite, type NamedItems, type TransactItems } from '#shared/db/batch';
import { db, tableName } from '#shared/db/client';
import { emailKeys } from '#shared/db/keys';
import {
  compact,
  deltaUpdates,
  locatePage,
  membershipDeltas,
  readCollection,
  readPage,
  reserveSeqs,
  type PagePosition,
} from '#shared/data/collections';
import { newNumericIds } from '#shared/data/numeric-ids';
import { outboxPut, type OutboxItem } from '#shared/data/outbox';
import { nowSeconds } from '#shared/util/ids';

export type ListStatus = 'pending' | 'processing' | 'completed' | 'insufficient_credits' | 'error';

export interface EmailList {
  id: number;
  account_id: string;
  name: string;
  description: string | null;
  email_count: number;
  rejected_count: number;
  /** Accepted emails not yet completed (or failed). */
  pending_count: number;
  /** Accepted emails waiting for validation credits. */
  awaiting_count: number;
  has_error: boolean;
  seq: number;
  created_at: number;
}

/**
 * The status is derived from counters that change atomically with the emails
 * themselves, so no crash between two writes can leave it stale.
 */
export function listStatus(list: EmailList): ListStatus {
  if (list.has_error) return 'error';
  if (list.awaiting_count > 0) return 'insufficient_credits';
  if (list.pending_count > 0) return 'processing';
  return 'completed';
}

export const toEmailList = (item: Record<string, unknown>): EmailList => ({
  id: Number(item.id),
  account_id: item.account_id as string,
  name: item.name as string,
  description: (item.description as string | undefined) ?? null,
  email_count: Math.max(0, Number(item.member_count ?? 0)),
  rejected_count: Number(item.rejected_count ?? 0),
  pending_count: Number(item.pending_count ?? 0),
  awaiting_count: Number(item.awaiting_count ?? 0),
  has_error: item.has_error === true,
  seq: Number(item.seq),
  created_at: Number(item.created_at),
});

/**
 * Stores a new list: a sequence number among the account's lists from one
 * atomic `ADD`, then the list item and an outbox carrying the collection's
 * counts in one transaction (the counts are applied by `settleOutboxes`).
 */
export async function createEmailList(accountId: string, input: { name: string; description?: string }): Promise<{ list: EmailList; outbox: OutboxItem }> {
  const collectionKey = emailKeys.accountLists(accountId);
  const [seq, [id]] = await Promise.all([reserveSeqs(collectionKey, 1, false), newNumericIds(1)]);
  const list = {
    id: id!,
    account_id: accountId,
    name: input.name,
    ...(input.description === undefined ? {} : { description: input.description }),
    seq: seq!,
    next_seq: 0,
    member_count: 0,
    rejected_count: 0,
    pending_count: 0,
    awaiting_count: 0,
    has_error: false,
    created_at: nowSeconds(),
  };
  const outbox = outboxPut(accountId, {
    emailIds: [],
    awaiting: false,
    collection: collectionKey,
    mustExist: false,
    deltas: membershipDeltas([seq!], 1),
  });
  await transactWrite({
    TransactItems: [
      { Put: outbox.put },
      {
        Put: {
          TableName: tableName(),
          Item: { ...emailKeys.list(accountId, id!), ...emailKeys.member(collectionKey.pk, seq!), type: 'email_list', ...list },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    ],
  });
  return { list: toEmailList(list), outbox: outbox.item };
}

export async function getEmailList(accountId: string, id: number): Promise<EmailList | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: emailKeys.list(accountId, id), ConsistentRead: true }));
  return out.Item ? toEmailList(out.Item) : undefined;
}

export async function listEmailLists(accountId: string, page: number): Promise<{ lists: EmailList[]; position: PagePosition } | undefined> {
  const collectionKey = emailKeys.accountLists(accountId);
  const position = await locatePage(await readCollection(collectionKey), page);
  if (!position) return undefined;
  return { lists: (await readPage(collectionKey.pk, position)).map(toEmailList), position };
}

/** Removes the list at once, with `also` in the same transaction (the purge record); false when there was none. */
export async function deleteEmailList(accountId: string, id: number, also: TransactItems = []): Promise<boolean> {
  const list = await getEmailList(accountId, id);
  if (!list) return false;
  const collectionKey = emailKeys.accountLists(accountId);
  const failed = await transactNamed([
    ['list', { Delete: { TableName: tableName(), Key: emailKeys.list(accountId, id), ConditionExpression: 'attribute_exists(pk)' } }],
    ...deltaUpdates(collectionKey, membershipDeltas([list.seq], -1)).map((item, i): NamedItems[number] => [`collection:${i}`, item]),
    ...also.map((item, i): NamedItems[number] => [`also:${i}`, item]),
  ]);
  if (failed.length) return false;
  await compact(collectionKey, list.seq);
  return true;
}

/**
 * Ends a list's round of work, at most once: when nothing of it is pending
 * or held any more, drops `work_started_at` (set by the first add since the
 * list was last complete) and returns how many seconds the round took.
 * Undefined when the list still has work, or another worker ended the round.
 */
export async function endListRound(accountId: string, id: number): Promise<number | undefined> {
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: emailKeys.list(accountId, id),
        UpdateExpression: 'REMOVE work_started_at',
        ConditionExpression: 'attribute_exists(work_started_at) AND pending_count = :zero AND awaiting_count = :zero',
        ExpressionAttributeValues: { ':zero': 0 },
        ReturnValues: 'UPDATED_OLD',
      }),
    );
    return nowSeconds() - Number(out.Attributes?.work_started_at);
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return undefined;
    throw error;
  }
}
