import * as v from 'valibot';
import { parseItem } from '#shared/db/item-schema';
import { batchGet, namedParts, transactNamed, txDelete, txPut, txUpdate, type TransactItem, type TransactItems } from '#shared/db/batch';
import { attr, condition, update } from '#shared/db/expression';
import { conditionHeld, getItem, query, unlessConditionFails, updateItem } from '#shared/db/items';
import { keys, ownerValues, stateCode, type ConversationState, type Owner } from '#shared/db/keys';
import { queryIndexPage, type CursorPageRequest, type Page } from '#shared/db/paging';
import { AGAIN, retryOnConflict } from '#shared/db/retry';
import { looksLikeId, newId } from '#shared/util/ids';

export interface Conversation {
  id: string;
  account_id: string;
  /** The user whose conversation it is (the token's contact). */
  owner_contact_id: string;
  contact_id: string | null;
  group_id: string | null;
  pinned_message_id: string | null;
  is_pinned: boolean;
  is_muted: boolean;
  last_active_at: number | null;
  last_opened_at: number | null;
  created_at: number;
  archived_at: number | null;
  /** Messages from other participants this user has not read; changed only with the entries it counts (shared/messaging/read-state.ts). */
  unread_count: number;
  /** The newest message id this user has read through (every earlier entry is read); null before any read. */
  read_through: string | null;
}

// Built in a /* @__PURE__ */ call, so that esbuild drops it from functions that never read this item (shared/db/item-schema.ts).
// v.nullish(x, null): null or absent, read as null.
const conversationSchema = /* @__PURE__ */ (() =>
  v.object({
    id: v.string(),
    account_id: v.string(),
    owner_contact_id: v.string(),
    contact_id: v.nullish(v.string(), null),
    group_id: v.nullish(v.string(), null),
    pinned_message_id: v.nullish(v.string(), null),
    is_pinned: v.boolean(),
    is_muted: v.boolean(),
    last_active_at: v.nullish(v.number(), null),
    last_opened_at: v.nullish(v.number(), null),
    created_at: v.number(),
    archived_at: v.nullish(v.number(), null),
    // Absent on conversations stored before delivery: nothing unread, nothing read.
    unread_count: v.optional(v.number(), 0),
    read_through: v.nullish(v.string(), null),
  }))();

export const toConversation = (item: Record<string, unknown>): Conversation => parseItem(conversationSchema, item);

const stateOf = (c: Pick<Conversation, 'is_muted' | 'is_pinned' | 'archived_at'>): ConversationState => ({
  muted: c.is_muted,
  pinned: c.is_pinned,
  archived: c.archived_at !== null,
});

/** The placeholders of a conversation's keys. */
const conversationValues = (owner: Owner, conv: string) => ({ ...ownerValues(owner), conv });
const conversationKey = (owner: Owner, id: string) => keys.conversation.key(conversationValues(owner, id));
const statePartition = (owner: Owner, state: ConversationState) =>
  keys.conversationsInState.partition({ ...ownerValues(owner), state: stateCode(state) });

/** The stored item: the record, its key and its two list-index entries. */
export const conversationItem = ({ read_through, ...c }: Conversation) => {
  const values = conversationValues({ accountId: c.account_id, contactId: c.owner_contact_id }, c.id);
  return {
    ...keys.conversation.key(values),
    ...keys.conversations.entry(values),
    ...keys.conversationsInState.entry({ ...values, state: stateCode(stateOf(c)) }),
    type: 'conversation',
    ...c,
    // Absent until the first read, so a delivery's condition `read_through < <msg>` can test it.
    ...(read_through === null ? {} : { read_through }),
  };
};

/**
 * The thread a conversation is a view of: the group's, or the one of its
 * two contacts (the same for both, whoever opened it).
 */
export const threadOf = (c: Pick<Conversation, 'owner_contact_id' | 'contact_id' | 'group_id'>): string =>
  c.group_id ?? [c.owner_contact_id, c.contact_id!].sort().join('+');

export type ConversationTarget = { contactId: string } | { groupId: string };

/** The id a conversation's guard is keyed by: its contact's or its group's. */
export const targetIdOf = (t: ConversationTarget) => ('contactId' in t ? t.contactId : t.groupId);

/** A new conversation as the interface documents it: not pinned, muted or archived, never active or opened. `nowMs`: its creation time. */
export const newConversation = (owner: Owner, target: ConversationTarget, nowMs = Date.now()): Conversation => ({
  id: newId('conv', nowMs),
  account_id: owner.accountId,
  owner_contact_id: owner.contactId,
  contact_id: 'contactId' in target ? target.contactId : null,
  group_id: 'groupId' in target ? target.groupId : null,
  pinned_message_id: null,
  is_pinned: false,
  is_muted: false,
  last_active_at: null,
  last_opened_at: null,
  created_at: Math.floor(nowMs / 1000),
  archived_at: null,
  unread_count: 0,
  read_through: null,
});

/**
 * Creates the user's conversation unless they already have one with the same
 * contact or group; a guard item keyed by the target makes that check atomic
 * under races.
 */
export async function putConversation(owner: Owner, target: ConversationTarget): Promise<{ conversation: Conversation; created: boolean }> {
  const targetId = targetIdOf(target);
  const now = Date.now();
  const conversation = newConversation(owner, target, now);
  // Stamped with the same clock reading as created_at: the creation event is dated by it (shared/webhooks/publish.ts).
  const failed = await transactNamed(
    [
      ['guard', txPut({ ...targetKey(owner, targetId), conversation_id: conversation.id }, condition`attribute_not_exists(pk)`)],
      ['conversation', txPut(conversationItem(conversation))],
    ],
    undefined,
    now,
  );
  if (failed.length === 0) return { conversation, created: true };
  const existing = failed.includes('guard') ? await conversationFor(owner, targetId) : undefined;
  // Deleted between the two calls: let the client retry.
  if (!existing) throw new Error(`opening a conversation failed on ${failed.join(', ')}`);
  return { conversation: existing, created: false };
}

const targetKey = (owner: Owner, target: string) => keys.conversationTarget.key({ ...ownerValues(owner), target });

/** The id of the user's conversation with a contact or group (its guard, read strongly), if they have one. */
export async function conversationIdFor(owner: Owner, targetId: string): Promise<string | undefined> {
  return (await getItem(targetKey(owner, targetId), true))?.conversation_id as string | undefined;
}

/** The same for many users at once (one strong batch read): user → conversation id. */
export async function conversationIdsFor(accountId: string, users: string[], targetId: string): Promise<Map<string, string>> {
  const found = await batchGet(
    users.map((user) => targetKey({ accountId, contactId: user }, targetId)),
    true,
  );
  const byKey = new Map(found.map((item) => [item.pk as string, item.conversation_id as string]));
  return new Map(
    users.flatMap((user) => {
      const id = byKey.get(targetKey({ accountId, contactId: user }, targetId).pk);
      return id ? [[user, id] as const] : [];
    }),
  );
}

/**
 * A conversation opened for a recipient by a delivery: the documented
 * defaults, active since the message, which it already counts as unread.
 */
export function openedByDelivery(owner: Owner, target: ConversationTarget, at: number, unread: boolean, nowMs?: number) {
  const conversation = { ...newConversation(owner, target, nowMs), last_active_at: at, unread_count: unread ? 1 : 0 };
  const targetId = targetIdOf(target);
  return {
    id: conversation.id,
    guard: txPut({ ...targetKey(owner, targetId), conversation_id: conversation.id }, condition`attribute_not_exists(pk)`),
    conversation: txPut(conversationItem(conversation)),
  };
}

/** The other contact of a one-to-one thread, seen from `me`; undefined for a group's thread. */
export const otherInThread = (thread: string, me: string): string | undefined =>
  thread.includes('+') ? thread.split('+').find((c) => c !== me) : undefined;

/**
 * A delivery into an existing conversation: active now and, when `unread`,
 * one more unread message, on condition that its user has not read past the
 * message already (then it arrives read, and the count must not move).
 */
export function deliveredInto(owner: Owner, id: string, messageId: string, at: number, unread: boolean): TransactItem {
  const write = update().set`last_active_at = ${at}`.when`attribute_exists(pk)`;
  if (unread) write.add`unread_count ${1}`.when`(attribute_not_exists(read_through) OR read_through < ${messageId})`;
  return txUpdate(conversationKey(owner, id), write);
}

/** Transaction part of a read or a retraction: `count` fewer unread messages. */
export const unreadLess = (owner: Owner, id: string, count: number): TransactItem =>
  txUpdate(conversationKey(owner, id), update().add`unread_count ${-count}`.when`attribute_exists(pk)`);

/** Moves the read position forward (never back); false when the conversation is gone or was read further already. */
export async function advanceReadThrough(owner: Owner, id: string, messageId: string): Promise<boolean> {
  return conditionHeld(
    updateItem(
      conversationKey(owner, id),
      update().set`read_through = ${messageId}`
        .when`attribute_exists(pk) AND (attribute_not_exists(read_through) OR read_through < ${messageId})`,
    ),
  );
}

/** The user's conversation with a contact or group, through its guard item. */
async function conversationFor(owner: Owner, targetId: string): Promise<Conversation | undefined> {
  const guard = await getItem(targetKey(owner, targetId), true);
  return guard ? findConversation(owner, guard.conversation_id as string) : undefined;
}

/** An id that cannot be a conversation's is answered without a read (a 2 KB path id would not even make a valid key). */
export async function findConversation(owner: Owner, id: string): Promise<Conversation | undefined> {
  if (!looksLikeId('conv', id)) return undefined;
  const item = await getItem(conversationKey(owner, id), true);
  return item ? toConversation(item) : undefined;
}

/** Which of these conversations still exist. */
export async function existingConversationIds(owner: Owner, ids: string[]): Promise<Set<string>> {
  const found = await batchGet(
    ids.map((id) => conversationKey(owner, id)),
    true,
  );
  return new Set(found.map((item) => item.id as string));
}

export interface ConversationFilters {
  muted?: boolean;
  archived?: boolean;
  pinned?: boolean;
  groupId?: string;
}

const BOTH = [false, true];
const matching = (wanted: boolean | undefined) => (wanted === undefined ? BOTH : [wanted]);

/** The state partitions whose union is exactly the conversations these filters keep. */
const statesMatching = (f: ConversationFilters): ConversationState[] =>
  matching(f.muted).flatMap((muted) =>
    matching(f.pinned).flatMap((pinned) => matching(f.archived).map((archived) => ({ muted, pinned, archived }))),
  );

/** Whether a filtered list holds this conversation. */
export const keeps = (f: ConversationFilters, c: Conversation) =>
  (f.muted === undefined || c.is_muted === f.muted) &&
  (f.pinned === undefined || c.is_pinned === f.pinned) &&
  (f.archived === undefined || (c.archived_at !== null) === f.archived) &&
  (f.groupId === undefined || c.group_id === f.groupId);

const inPage = (page: CursorPageRequest, id: string) =>
  (page.startingAfter === undefined || id < page.startingAfter) && (page.endingBefore === undefined || id > page.endingBefore);

/**
 * Every filter reads only what it returns: a user has at most one
 * conversation per group, found through its guard item; the boolean
 * filters read the state partitions that match (1, 2 or 4 of the 8), each
 * for at most one page. No filter scans the user's other conversations.
 */
export async function queryConversations(owner: Owner, filters: ConversationFilters, page: CursorPageRequest): Promise<Page<Conversation>> {
  if (filters.groupId !== undefined) {
    const found = await conversationFor(owner, filters.groupId);
    return { items: found && keeps(filters, found) && inPage(page, found.id) ? [found] : [], hasMore: false };
  }
  const filtered = filters.muted !== undefined || filters.pinned !== undefined || filters.archived !== undefined;
  const result = await queryIndexPage(
    filtered
      ? { index: keys.conversationsInState.index, partitions: statesMatching(filters).map((s) => statePartition(owner, s)), ...page }
      : { index: keys.conversations.index, partitions: [keys.conversations.partition(ownerValues(owner))], ...page },
  );
  return { items: result.items.map(toConversation), hasMore: result.hasMore };
}

export type ConversationChanges = Partial<
  Pick<Conversation, 'pinned_message_id' | 'is_pinned' | 'is_muted' | 'archived_at' | 'last_opened_at'>
>;

/**
 * Applies the changes to `current` (a strong read). A change of muted,
 * pinned or archived also moves the item to its new state partition, on
 * condition that the state is still the one read; if a concurrent update
 * changed it, the item is read again and the change re-applied
 * (retryOnConflict). Answers undefined when the conversation is gone,
 * 'conflict' if it kept changing.
 */
export async function writeConversation(
  owner: Owner,
  current: Conversation,
  changes: ConversationChanges,
): Promise<Conversation | undefined | 'conflict'> {
  const entries = Object.entries(changes).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return current;
  const movesState = entries.some(([k]) => k === 'is_muted' || k === 'is_pinned' || k === 'archived_at');
  let read: Conversation = current;
  return retryOnConflict<Conversation | undefined | 'conflict'>(
    async () => {
      const write = update().when`attribute_exists(pk)`;
      for (const [field, value] of entries) write.set`${attr(field)} = ${value}`;
      if (movesState) {
        write.set`gsi2pk = ${statePartition(owner, stateOf({ ...read, ...Object.fromEntries(entries) }))}`;
        write.when`gsi2pk = ${statePartition(owner, stateOf(read))}`;
      }
      const out = await unlessConditionFails(updateItem(conversationKey(owner, read.id), write, 'ALL_NEW'));
      if (out) return toConversation(out);
      const again = await findConversation(owner, read.id);
      if (!again) return undefined;
      read = again;
      return AGAIN;
    },
    { exhausted: () => 'conflict' },
  );
}

/** Removes the conversation and its uniqueness guard, with `also` in the same transaction (the purge record). */
export async function removeConversation(owner: Owner, id: string, also: TransactItems = []): Promise<Conversation | undefined> {
  const existing = await findConversation(owner, id);
  if (!existing) return undefined;
  const targetId = existing.contact_id ?? existing.group_id!;
  const failed = await transactNamed([
    ['conversation', txDelete(conversationKey(owner, id), condition`attribute_exists(pk)`)],
    ['guard', txDelete(targetKey(owner, targetId), condition`conversation_id = ${id}`)],
    ...namedParts('also', also),
  ]);
  return failed.length === 0 ? existing : undefined;
}

/** A batch of the user's conversation ids (a deleted contact's are removed a batch at a time). */
export async function conversationIdsOf(owner: Owner, limit: number): Promise<string[]> {
  const items = await query({ index: keys.conversations.index, partition: keys.conversations.partition(ownerValues(owner)) }, limit, 1);
  return items.map((item) => String(item.gsi1sk));
}

/** Transaction part a message send uses: the conversation must exist, and becomes active. */
export const touchConversationUpdate = (owner: Owner, id: string, at: number): TransactItem =>
  txUpdate(conversationKey(owner, id), update().set`last_active_at = ${at}`.when`attribute_exists(pk)`);

/** Clears the pin only if it still points at this message. */
export async function clearPinnedMessage(owner: Owner, id: string, messageId: string): Promise<void> {
  await conditionHeld(
    updateItem(conversationKey(owner, id), update().set`pinned_message_id = ${null}`.when`pinned_message_id = ${messageId}`),
  );
}
