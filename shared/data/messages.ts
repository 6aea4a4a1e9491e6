import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { transactWrite } from '#shared/db/batch';
import { db, tableName } from '#shared/db/client';
import { keys } from '#shared/db/keys';
import { queryIndexPage, type CursorPageRequest, type Page } from '#shared/db/paging';
import { touchContactUpdate } from '#shared/data/contacts';
import { touchConversationUpdate } from '#shared/data/conversations';
import { cancellationCodes, isConditionFailure } from '#shared/data/errors';

export interface Attachment {
  id: string;
  type: 'image' | 'video' | 'audio' | 'file';
  url: string;
  name: string | null;
  mime_type: string | null;
  size: number | null;
}

/** Reactions keep first-added order, so they are a list of named entries. */
export interface ReactionEntry {
  name: string;
  contacts: string[];
}

export interface Message {
  id: string;
  account_id: string;
  conversation_id: string;
  contact_id: string;
  message: string;
  reactions: ReactionEntry[];
  attachments: Attachment[];
  read_at: number | null;
  created_at: number;
  updated_at: number | null;
  /** Optimistic-locking counter for read-modify-write updates. */
  version: number;
}

const FIELDS = [
  'id', 'account_id', 'conversation_id', 'contact_id', 'message', 'reactions', 'attachments', 'read_at',
  'created_at', 'updated_at', 'version',
] as const;

const toMessage = (item: Record<string, unknown>) =>
  Object.fromEntries(FIELDS.map((f) => [f, item[f] ?? null])) as unknown as Message;

const toItem = (m: Message) => ({
  ...keys.message(m.account_id, m.id),
  ...keys.messageIndexes(m.account_id, m.conversation_id, m.id),
  type: 'message',
  ...m,
});

/**
 * Stores the message, marks its conversation and sender active, all or
 * nothing. Returns false when the conversation does not exist (any more).
 */
export async function insertMessage(m: Message): Promise<boolean> {
  try {
    await transactWrite({
      TransactItems: [
        { Put: { TableName: tableName(), Item: toItem(m), ConditionExpression: 'attribute_not_exists(pk)' } },
        { Update: touchConversationUpdate(m.account_id, m.conversation_id, m.created_at) },
        { Update: touchContactUpdate(m.account_id, m.contact_id, m.created_at) },
      ],
    });
    return true;
  } catch (error) {
    if (cancellationCodes(error)?.[1] === 'ConditionalCheckFailed') return false;
    throw error;
  }
}

export async function getMessage(accountId: string, id: string): Promise<Message | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.message(accountId, id), ConsistentRead: true }),
  );
  return out.Item ? toMessage(out.Item) : undefined;
}

export async function listMessages(
  accountId: string,
  conversationId: string | undefined,
  page: CursorPageRequest,
): Promise<Page<Message>> {
  const result = await queryIndexPage(
    conversationId
      ? { index: 'gsi1', partition: keys.conversationMessagesPartition(accountId, conversationId), ...page }
      : { index: 'gsi2', partition: keys.accountMessagesPartition(accountId), ...page },
  );
  return { items: result.items.map(toMessage), hasMore: result.hasMore };
}

/** Writes the new version only if nobody else wrote since `previous` was read. */
export async function replaceMessage(previous: Message, next: Message): Promise<'ok' | 'conflict'> {
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: toItem({ ...next, version: previous.version + 1 }),
        ConditionExpression: 'version = :version',
        ExpressionAttributeValues: { ':version': previous.version },
      }),
    );
    return 'ok';
  } catch (error) {
    if (isConditionFailure(error)) return 'conflict';
    throw error;
  }
}

export async function deleteMessage(accountId: string, id: string): Promise<Message | undefined> {
  try {
    const out = await db().send(
      new DeleteCommand({
        TableName: tableName(),
        Key: keys.message(accountId, id),
        ConditionExpression: 'attribute_exists(pk)',
        ReturnValues: 'ALL_OLD',
      }),
    );
    return toMessage(out.Attributes!);
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** One batch of a conversation's message keys, for purging. */
export async function conversationMessageKeys(
  accountId: string,
  conversationId: string,
  limit: number,
): Promise<{ pk: string; sk: string }[]> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.conversationMessagesPartition(accountId, conversationId) },
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((item) => ({ pk: item.pk as string, sk: item.sk as string }));
}
