import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { transactWrite, type TransactItems } from '#shared/db/batch';
import { db, tableName } from '#shared/db/client';
import { keys } from '#shared/db/keys';
import { queryIndexPage, type CursorPageRequest, type Page } from '#shared/db/paging';
import { cancellationCodes, isConditionFailure } from '#shared/data/errors';
import { newId, nowSeconds } from '#shared/util/ids';

export interface Conversation {
  id: string;
  account_id: string;
  /** The contact who opened it (the authenticated user then). */
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

const toConversation = (item: Record<string, unknown>) =>
  Object.fromEntries(FIELDS.map((f) => [f, item[f] ?? null])) as unknown as Conversation;

export type ConversationTarget = { contactId: string } | { groupId: string };

/**
 * Creates the conversation unless one exists for the same contact or group;
 * a guard item keyed by the target makes that check atomic under races.
 */
export async function openConversation(
  accountId: string,
  ownerContactId: string,
  target: ConversationTarget,
): Promise<{ conversation: Conversation; created: boolean }> {
  const targetId = 'contactId' in target ? target.contactId : target.groupId;
  const conversation: Conversation = {
    id: newId('conv'),
    account_id: accountId,
    owner_contact_id: ownerContactId,
    contact_id: 'contactId' in target ? target.contactId : null,
    group_id: 'groupId' in target ? target.groupId : null,
    pinned_message_id: null,
    is_pinned: false,
    is_muted: false,
    last_active_at: null,
    last_opened_at: null,
    created_at: nowSeconds(),
    archived_at: null,
  };
  try {
    await transactWrite({
      TransactItems: [
        {
          Put: {
            TableName: tableName(),
            Item: { ...keys.conversationTarget(accountId, targetId), conversation_id: conversation.id },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        {
          Put: {
            TableName: tableName(),
            Item: {
              ...keys.conversation(accountId, conversation.id),
              ...keys.conversationIndex(accountId, conversation.id),
              type: 'conversation',
              ...conversation,
            },
          },
        },
      ],
    });
    return { conversation, created: true };
  } catch (error) {
    if (cancellationCodes(error)?.[0] !== 'ConditionalCheckFailed') throw error;
    const guard = await db().send(
      new GetCommand({ TableName: tableName(), Key: keys.conversationTarget(accountId, targetId), ConsistentRead: true }),
    );
    const existing = guard.Item && (await getConversation(accountId, guard.Item.conversation_id as string));
    if (!existing) throw error; // deleted between the two calls: let the client retry
    return { conversation: existing, created: false };
  }
}

export async function getConversation(accountId: string, id: string): Promise<Conversation | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.conversation(accountId, id), ConsistentRead: true }),
  );
  return out.Item ? toConversation(out.Item) : undefined;
}

export interface ConversationFilters {
  muted?: boolean;
  archived?: boolean;
  pinned?: boolean;
  groupId?: string;
}

export async function listConversations(
  accountId: string,
  filters: ConversationFilters,
  page: CursorPageRequest,
): Promise<Page<Conversation>> {
  const clauses: string[] = [];
  const values: Record<string, unknown> = {};
  if (filters.muted !== undefined) {
    clauses.push('is_muted = :muted');
    values[':muted'] = filters.muted;
  }
  if (filters.pinned !== undefined) {
    clauses.push('is_pinned = :pinned');
    values[':pinned'] = filters.pinned;
  }
  if (filters.archived !== undefined) {
    clauses.push(filters.archived ? 'archived_at <> :null' : 'archived_at = :null');
    values[':null'] = null;
  }
  if (filters.groupId !== undefined) {
    clauses.push('group_id = :group');
    values[':group'] = filters.groupId;
  }
  const result = await queryIndexPage({
    index: 'gsi1',
    partition: keys.conversationsPartition(accountId),
    ...page,
    ...(clauses.length > 0
      ? { filter: { FilterExpression: clauses.join(' AND '), ExpressionAttributeValues: values } }
      : {}),
  });
  return { items: result.items.map(toConversation), hasMore: result.hasMore };
}

export type ConversationChanges = Partial<
  Pick<Conversation, 'pinned_message_id' | 'is_pinned' | 'is_muted' | 'archived_at' | 'last_opened_at'>
>;

export async function updateConversation(
  accountId: string,
  id: string,
  changes: ConversationChanges,
): Promise<Conversation | undefined> {
  const entries = Object.entries(changes).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return getConversation(accountId, id);
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.conversation(accountId, id),
        UpdateExpression: `SET ${entries.map(([k]) => `#${k} = :${k}`).join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: Object.fromEntries(entries.map(([k]) => [`#${k}`, k])),
        ExpressionAttributeValues: Object.fromEntries(entries.map(([k, v]) => [`:${k}`, v])),
        ReturnValues: 'ALL_NEW',
      }),
    );
    return toConversation(out.Attributes!);
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** Removes the conversation and its uniqueness guard, with `also` in the same transaction (the purge record). */
export async function deleteConversation(accountId: string, id: string, also: TransactItems = []): Promise<Conversation | undefined> {
  const existing = await getConversation(accountId, id);
  if (!existing) return undefined;
  const targetId = existing.contact_id ?? existing.group_id!;
  try {
    await transactWrite({
      TransactItems: [
        {
          Delete: {
            TableName: tableName(),
            Key: keys.conversation(accountId, id),
            ConditionExpression: 'attribute_exists(pk)',
          },
        },
        {
          Delete: {
            TableName: tableName(),
            Key: keys.conversationTarget(accountId, targetId),
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
export const touchConversationUpdate = (accountId: string, id: string, at: number) => ({
  TableName: tableName(),
  Key: keys.conversation(accountId, id),
  UpdateExpression: 'SET last_active_at = :at',
  ConditionExpression: 'attribute_exists(pk)',
  ExpressionAttributeValues: { ':at': at },
});

/** Clears the pin only if it still points at this message. */
export async function clearPinnedMessage(accountId: string, id: string, messageId: string): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.conversation(accountId, id),
        UpdateExpression: 'SET pinned_message_id = :null',
        ConditionExpression: 'pinned_message_id = :message',
        ExpressionAttributeValues: { ':null': null, ':message': messageId },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}
