import { randomInt } from 'node:crypto';
import * as v from 'valibot';
import { parseItem } from '#shared/db/item-schema';
import { namedParts, transactNamed, txDelete, txPut, txUpdate, type TransactItem, type TransactItems } from '#shared/db/batch';
import { condition, update } from '#shared/db/expression';
import { conditionHeld, getItem, unlessConditionFails, updateItem, type Key } from '#shared/db/items';
import { retryOnConflict } from '#shared/db/retry';
import { keys } from '#shared/db/keys';
import { compact, deltaUpdates, locatePage, membershipDeltas, readCollection, readPage, type PagePosition } from '#shared/data/collections';
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
  /** CSV imports adding to the list now (shared/data/imports.ts): the list is processing until they end. */
  imports_running: number;
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
  if (list.pending_count > 0 || list.imports_running > 0) return 'processing';
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
      imports_running: count,
      has_error: v.optional(v.boolean(), false),
      seq: v.number(),
      created_at: v.number(),
    }),
    v.transform(({ member_count, ...list }): EmailList => ({ ...list, email_count: Math.max(0, member_count) })),
  ))();

export const toEmailList = (item: Record<string, unknown>): EmailList => parseItem(listItem, item);

const listKey = (accountId: string, list: number) => keys.list.key({ acct: accountId, list });

/** Bits below the millisecond in a list id: ids stay below 2^53 until the year 2109. */
const LIST_ID_RANDOM = 2048;
/** How long a list id's uniqueness guard is kept: later ids are made in later milliseconds. */
const LIST_ID_GUARD_SECONDS = 86_400;
const CREATE_TRIES = 5;

/**
 * Stores a new list in two calls: one `UpdateItem` on the account's list
 * collection reserves its sequence number (its page position) and records
 * its id as the account's latest, then one transaction writes the list, its
 * count in the collection and a short-lived guard that makes the id unique
 * in the deployment. The id is the creation millisecond times 2048 plus a
 * random part: it increases with creation time without the shared counter's
 * call (`docs/data-model.md`, "Email list ids").
 */
export async function createEmailList(
  accountId: string,
  input: { name: string; description?: string },
  /** An idempotent request's record of the list it made, written in the list's own transaction. */
  journal?: (id: number) => TransactItem,
): Promise<EmailList> {
  const collectionKey = keys.accountLists.key({ acct: accountId });
  for (let attempt = 1; ; attempt++) {
    const { seq, id } = await reserveList(collectionKey, Date.now() * LIST_ID_RANDOM + randomInt(LIST_ID_RANDOM));
    const list = {
      id,
      account_id: accountId,
      name: input.name,
      ...(input.description === undefined ? {} : { description: input.description }),
      seq,
      next_seq: 0,
      member_count: 0,
      rejected_count: 0,
      pending_count: 0,
      awaiting_count: 0,
      has_error: false,
      created_at: nowSeconds(),
    };
    // The list, its place in the account's page index and its id's guard commit together: nothing is left for later (no outbox).
    const failed = await transactNamed([
      [
        'guard',
        txPut(
          { ...keys.listIdGuard.key({ list: id }), expires_at: nowSeconds() + LIST_ID_GUARD_SECONDS },
          condition`attribute_not_exists(pk)`,
        ),
      ],
      [
        'list',
        txPut(
          { ...listKey(accountId, id), ...keys.members.entry({ collection: collectionKey.pk, seq }), type: 'email_list', ...list },
          condition`attribute_not_exists(pk)`,
        ),
      ],
      ...namedParts('collection', deltaUpdates(collectionKey, membershipDeltas([seq], 1))),
      ...(journal ? [['step', journal(id)] as [string, TransactItem]] : []),
    ]);
    // The journal's condition holds unless another attempt of the request took its key over: that one answers.
    if (failed.includes('step') && !failed.includes('list')) throw new Error('another attempt of this idempotent request holds its key');
    // A lost answer is covered by the SDK, which resends the transaction with the same ClientRequestToken (DynamoDB answers
    // the replay as a success); past that, the list already there is this transaction's own: an id is never made twice in
    // one account. Only the guard: another account's list holds the id; the reserved seq stays unused.
    if (failed.length === 0 || failed.includes('list')) return toEmailList(list);
    if (attempt >= CREATE_TRIES) throw new Error('could not find a free email list id');
  }
}

/**
 * The list's sequence number and id: `candidate`, recorded as the account's
 * latest when it is larger than the last; else (a clock behind, or another
 * create of the account in the same millisecond) the last plus one, from an
 * unconditional `ADD`, so contention never fails a create.
 */
async function reserveList(collectionKey: Key, candidate: number): Promise<{ seq: number; id: number }> {
  const byClock = update().add`next_seq ${1}`.set`last_list_id = ${candidate}`
    .when`attribute_not_exists(last_list_id) OR last_list_id < ${candidate}`;
  // A collection item is also written by transactions (a list's creation counts it in one): meeting one is retried.
  const out =
    (await retryOnConflict(() => unlessConditionFails(updateItem(collectionKey, byClock, 'UPDATED_NEW')))) ??
    (await retryOnConflict(() => updateItem(collectionKey, update().add`next_seq ${1}, last_list_id ${1}`, 'UPDATED_NEW')));
  return { seq: Number(out.next_seq) - 1, id: Number(out.last_list_id) };
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
 * or held any more and no import holds it (the list is completed), drops
 * `work_started_at` (set by the first add since the list was last complete)
 * and returns how many seconds the round took. Undefined when the list
 * still has work, or another worker ended the round. So `work_started_at`
 * is there when a round that added emails completes, and a round that added
 * none (an import that failed before its first row) has none: the change
 * stream announces only the first (shared/stream/account.ts).
 */
export async function endListRound(accountId: string, id: number): Promise<number | undefined> {
  const end = update().remove`work_started_at`.when`attribute_exists(work_started_at) AND pending_count = ${0} AND awaiting_count = ${0}`
    .when`(attribute_not_exists(imports_running) OR imports_running = ${0})`;
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
