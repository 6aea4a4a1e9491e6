import * as v from 'valibot';
import { parseItem } from '#shared/db/item-schema';
import {
  namedParts,
  transactNamed,
  transactWrite,
  txDelete,
  txPut,
  txUpdate,
  type TransactItem,
  type TransactItems,
} from '#shared/db/batch';
import { condition, update } from '#shared/db/expression';
import { conditionHeld, getItem, unlessConditionFails, updateItem } from '#shared/db/items';
import { keys } from '#shared/db/keys';
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

// Built in /* @__PURE__ */ calls, so that esbuild drops them from functions that never read these items (shared/db/item-schema.ts).
// v.optional(x, d): absent, read as d; v.nullish(x, null): null or absent, read as null.
const count = /* @__PURE__ */ (() => v.optional(v.number(), 0))();

const listItem = /* @__PURE__ */ (() =>
  v.pipe(
    v.object({
      id: v.number(),
      account_id: v.string(),
      name: v.string(),
      description: v.nullish(v.string(), null),
      member_count: count,
      rejected_count: count,
      pending_count: count,
      awaiting_count: count,
      has_error: v.optional(v.boolean(), false),
      seq: v.number(),
      created_at: v.number(),
    }),
    v.transform(({ member_count, ...list }): EmailList => ({ ...list, email_count: Math.max(0, member_count) })),
  ))();

export const toEmailList = (item: Record<string, unknown>): EmailList => parseItem(listItem, item);

const listKey = (accountId: string, list: number) => keys.list.key({ acct: accountId, list });

/**
 * Stores a new list: a sequence number among the account's lists from one
 * atomic `ADD`, then the list item and an outbox carrying the collection's
 * counts in one transaction (the counts are applied by `settleOutboxes`).
 */
export async function createEmailList(accountId: string, input: { name: string; description?: string }): Promise<EmailList> {
  const collectionKey = keys.accountLists.key({ acct: accountId });
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
  // The list and its place in the account's page index commit together: nothing is left for later (no outbox).
  await transactWrite({
    TransactItems: [
      txPut(
        { ...listKey(accountId, id!), ...keys.members.entry({ collection: collectionKey.pk, seq: seq! }), type: 'email_list', ...list },
        condition`attribute_not_exists(pk)`,
      ),
      ...deltaUpdates(collectionKey, membershipDeltas([seq!], 1)),
    ],
  });
  return toEmailList(list);
}

export async function getEmailList(accountId: string, id: number): Promise<EmailList | undefined> {
  const item = await getItem(listKey(accountId, id), true);
  return item ? toEmailList(item) : undefined;
}

export async function listEmailLists(accountId: string, page: number): Promise<{ lists: EmailList[]; position: PagePosition } | undefined> {
  const collectionKey = keys.accountLists.key({ acct: accountId });
  const position = await locatePage(await readCollection(collectionKey), page);
  if (!position) return undefined;
  return { lists: (await readPage(collectionKey.pk, position)).map(toEmailList), position };
}

/** Removes the list at once, with `also` in the same transaction (the purge record); false when there was none. */
export async function deleteEmailList(accountId: string, id: number, also: TransactItems = []): Promise<boolean> {
  const list = await getEmailList(accountId, id);
  if (!list) return false;
  const collectionKey = keys.accountLists.key({ acct: accountId });
  const failed = await transactNamed([
    ['list', txDelete(listKey(accountId, id), condition`attribute_exists(pk)`)],
    ...namedParts('collection', deltaUpdates(collectionKey, membershipDeltas([list.seq], -1))),
    ...namedParts('also', also),
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
  const end = update().remove`work_started_at`.when`attribute_exists(work_started_at) AND pending_count = ${0} AND awaiting_count = ${0}`;
  const out = await unlessConditionFails(updateItem(listKey(accountId, id), end, 'UPDATED_OLD'));
  return out ? nowSeconds() - Number(out.work_started_at) : undefined;
}

/** Transaction part: `count` emails of the list finished (`listError`: one of them marks the list as failed). */
export function listFinished(accountId: string, listId: number, count: number, listError: boolean): TransactItem {
  const write = update().add`pending_count ${-count}`.when`attribute_exists(pk)`;
  if (listError) write.set`has_error = ${true}`;
  return txUpdate(listKey(accountId, listId), write);
}

/** Transaction part: `count` held emails of the list released for validation. */
export const listReleased = (accountId: string, listId: number, count: number): TransactItem =>
  txUpdate(listKey(accountId, listId), update().add`awaiting_count ${-count}, pending_count ${count}`.when`attribute_exists(pk)`);

/** Transaction part: rejected addresses of an add that stored none, while the list exists. */
export const rejectedAdded = (accountId: string, listId: number, rejected: number): TransactItem =>
  txUpdate(listKey(accountId, listId), update().add`rejected_count ${rejected}`.when`attribute_exists(pk)`);

/** Rejected addresses of an add that stored none; false when the list is gone. */
export const addRejected = (accountId: string, listId: number, rejected: number): Promise<boolean> =>
  conditionHeld(updateItem(listKey(accountId, listId), update().add`rejected_count ${rejected}`.when`attribute_exists(pk)`));
