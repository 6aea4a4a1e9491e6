import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, transactWrite, type TransactItems } from '#shared/db/batch';
import { db, tableName } from '#shared/db/client';
import { keys, type ConversationState, type Owner } from '#shared/db/keys';
import { queryIndexPage, type CursorPageRequest, type Page } from '#shared/db/paging';
import { cancellationCodes, isConditionFailure } from '#shared/data/errors';
import { looksLikeId, newId, nowSeconds } from '#shared/util/ids';

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
}

const FIELDS = [
  'id', 'account_id', 'owner_contact_id', 'contact_id', 'group_id', 'pinned_message_id', 'is_pinned', 'is_muted',
  'last_active_at', 'last_opened_at', 'created_at', 'archived_at',
] as const;

export const toConversation = (item: Record<string, unknown>) =>
  Object.fromEntries(FIELDS.map((f) => [f, item[f] ?? null])) as unknown as Conversation;

const stateOf = (c: Pick<Conversation, 'is_muted' | 'is_pinned' | 'archived_at'>): ConversationState => ({
  muted: c.is_muted,
  pinned: c.is_pinned,
  archived: c.archived_at !== null,
});

const ownerOf = (c: Conversation): Owner => ({ accountId: c.account_id, contactId: c.owner_contact_id });

/** The stored item: the record, its key and its two list-index entries. */
export const conversationItem = (c: Conversation) => ({
  ...keys.conversation(ownerOf(c), c.id),
  ...keys.conversationIndexes(ownerOf(c), c.id, stateOf(c)),
  type: 'conversation',
  ...c,
});

export type ConversationTarget = { contactId: string } | { groupId: string };

/** A new conversation as the interface documents it: not pinned, muted or archived, never active or opened. */
export const newConversation = (owner: Owner, target: ConversationTarget): Conversation => ({
  id: newId('conv'),
  account_id: owner.accountId,
  owner_contact_id: owner.contactId,
  contact_id: 'contactId' in target ? target.contactId : null,
  group_id: 'groupId' in target ? target.groupId : null,
  pinned_message_id: null,
  is_pinned: false,
  is_muted: false,
  last_active_at: null,
  last_opened_at: null,
  created_at: nowSeconds(),
  archived_at: null,
});

/**
 * Creates the user's conversation unless they already have one with the same
 * contact or group; a guard item keyed by the target makes that check atomic
 * under races.
 */
export async function openConversation(
  owner: Owner,
  target: ConversationTarget,
): Promise<{ conversation: Conversation; created: boolean }> {
  const targetId = 'contactId' in target ? target.contactId : target.groupId;
  const conversation = newConversation(owner, target);
  try {
    await transactWrite({
      TransactItems: [
        {
          Put: {
            TableName: tableName(),
            Item: { ...keys.conversationTarget(owner, targetId), conversation_id: conversation.id },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        { Put: { TableName: tableName(), Item: conversationItem(conversation) } },
      ],
    });
    return { conversation, created: true };
  } catch (error) {
    if (cancellationCodes(error)?.[0] !== 'ConditionalCheckFailed') throw error;
    const existing = await conversationFor(owner, targetId);
    if (!existing) throw error; // deleted between the two calls: let the client retry
    return { conversation: existing, created: false };
  }
}

/** The user's conversation with a contact or group, through its guard item. */
async function conversationFor(owner: Owner, targetId: string): Promise<Conversation | undefined> {
  const guard = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.conversationTarget(owner, targetId), ConsistentRead: true }),
  );
  return guard.Item ? getConversation(owner, guard.Item.conversation_id as string) : undefined;
}

/** An id that cannot be a conversation's is answered without a read (a 2 KB path id would not even make a valid key). */
export async function getConversation(owner: Owner, id: string): Promise<Conversation | undefined> {
  if (!looksLikeId('conv', id)) return undefined;
  const out = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.conversation(owner, id), ConsistentRead: true }),
  );
  return out.Item ? toConversation(out.Item) : undefined;
}

/** Which of these conversations still exist. */
export async function existingConversationIds(owner: Owner, ids: string[]): Promise<Set<string>> {
  const found = await batchGet(ids.map((id) => keys.conversation(owner, id)), true);
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

const keeps = (f: ConversationFilters, c: Conversation) =>
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
export async function listConversations(
  owner: Owner,
  filters: ConversationFilters,
  page: CursorPageRequest,
): Promise<Page<Conversation>> {
  if (filters.groupId !== undefined) {
    const found = await conversationFor(owner, filters.groupId);
    return { items: found && keeps(filters, found) && inPage(page, found.id) ? [found] : [], hasMore: false };
  }
  const filtered = filters.muted !== undefined || filters.pinned !== undefined || filters.archived !== undefined;
  const result = await queryIndexPage(
    filtered
      ? { index: 'gsi2', partitions: statesMatching(filters).map((s) => keys.conversationStatePartition(owner, s)), ...page }
      : { index: 'gsi1', partitions: [keys.conversationsPartition(owner)], ...page },
  );
  return { items: result.items.map(toConversation), hasMore: result.hasMore };
}

export type ConversationChanges = Partial<
  Pick<Conversation, 'pinned_message_id' | 'is_pinned' | 'is_muted' | 'archived_at' | 'last_opened_at'>
>;

const MAX_UPDATE_ATTEMPTS = 5;

/**
 * Applies the changes to `current` (a strong read). A change of muted,
 * pinned or archived also moves the item to its new state partition, on
 * condition that the state is still the one read; if a concurrent update
 * changed it, the item is read again and the change re-applied. Answers
 * undefined when the conversation is gone, 'conflict' if it kept changing.
 */
export async function updateConversation(
  owner: Owner,
  current: Conversation,
  changes: ConversationChanges,
): Promise<Conversation | undefined | 'conflict'> {
  const entries = Object.entries(changes).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return current;
  const movesState = entries.some(([k]) => k === 'is_muted' || k === 'is_pinned' || k === 'archived_at');
  let read: Conversation | undefined = current;
  for (let attempt = 0; read && attempt < MAX_UPDATE_ATTEMPTS; attempt++) {
    const names: Record<string, string> = Object.fromEntries(entries.map(([k]) => [`#${k}`, k]));
    const values: Record<string, unknown> = Object.fromEntries(entries.map(([k, v]) => [`:${k}`, v]));
    const sets = entries.map(([k]) => `#${k} = :${k}`);
    let condition = 'attribute_exists(pk)';
    if (movesState) {
      sets.push('gsi2pk = :state');
      values[':state'] = keys.conversationStatePartition(owner, stateOf({ ...read, ...Object.fromEntries(entries) }));
      values[':read_state'] = keys.conversationStatePartition(owner, stateOf(read));
      condition += ' AND gsi2pk = :read_state';
    }
    try {
      const out = await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.conversation(owner, read.id),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return toConversation(out.Attributes!);
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      read = await getConversation(owner, read.id);
    }
  }
  return read ? 'conflict' : undefined;
}

/** Removes the conversation and its uniqueness guard, with `also` in the same transaction (the purge record). */
export async function deleteConversation(owner: Owner, id: string, also: TransactItems = []): Promise<Conversation | undefined> {
  const existing = await getConversation(owner, id);
  if (!existing) return undefined;
  const targetId = existing.contact_id ?? existing.group_id!;
  try {
    await transactWrite({
      TransactItems: [
        {
          Delete: {
            TableName: tableName(),
            Key: keys.conversation(owner, id),
            ConditionExpression: 'attribute_exists(pk)',
          },
        },
        {
          Delete: {
            TableName: tableName(),
            Key: keys.conversationTarget(owner, targetId),
            ConditionExpression: 'conversation_id = :id',
            ExpressionAttributeValues: { ':id': id },
          },
        },
        ...also,
      ],
    });
    return existing;
  } catch (error) {
    if (cancellationCodes(error)?.includes('ConditionalCheckFailed')) return undefined;
    throw error;
  }
}

/** Transaction part a message send uses: the conversation must exist, and becomes active. */
export const touchConversationUpdate = (owner: Owner, id: string, at: number) => ({
  TableName: tableName(),
  Key: keys.conversation(owner, id),
  UpdateExpression: 'SET last_active_at = :at',
  ConditionExpression: 'attribute_exists(pk)',
  ExpressionAttributeValues: { ':at': at },
});

/** Clears the pin only if it still points at this message. */
export async function clearPinnedMessage(owner: Owner, id: string, messageId: string): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.conversation(owner, id),
        UpdateExpression: 'SET pinned_message_id = :null',
        ConditionExpression: 'pinned_message_id = :message',
        ExpressionAttributeValues: { ':null': null, ':message': messageId },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}
