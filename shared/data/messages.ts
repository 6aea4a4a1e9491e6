import { GetCommand, QueryCommand, UpdateCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { batchGet, transactWrite } from '#shared/db/batch';
import { db, tableName } from '#shared/db/client';
import { keys, type Owner } from '#shared/db/keys';
import { queryIndexPage, queryItems, type CursorPageRequest, type Page } from '#shared/db/paging';
import { touchContactUpdate } from '#shared/data/contacts';
import { getConversation, toConversation, touchConversationUpdate, type Conversation } from '#shared/data/conversations';
import { cancellationCodes, isConditionFailure } from '#shared/data/errors';
import { looksLikeId } from '#shared/util/ids';

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
  /** The sender: the user whose conversation it is. */
  contact_id: string;
  message: string;
  reactions: ReactionEntry[];
  attachments: Attachment[];
  read_at: number | null;
  created_at: number;
  updated_at: number | null;
  /** Encoded size of the reactions and attachments (see shared/messaging/size.ts); only ever over-counts. */
  extras_bytes: number;
}

/**
 * Stored reactions are a map from name to `[seq, contact, contact, ...]`:
 * `seq` (when the name was first added) orders the names, the list order
 * the contacts. Each name is its own map entry, so adding to one name,
 * creating another or removing a third are separate paths of one atomic
 * UpdateItem and commute with every other request's. Two requests adding
 * the same contact at once may both append it; reading keeps the first.
 */
type StoredReactions = Record<string, [number, ...string[]]>;

const toReactions = (stored: StoredReactions | undefined): ReactionEntry[] =>
  Object.entries(stored ?? {})
    .sort(([a, [x]], [b, [y]]) => x - y || (a < b ? -1 : 1))
    .map(([name, [, ...contacts]]) => ({ name, contacts: [...new Set(contacts)] }));

const toMessage = (item: Record<string, unknown>): Message => ({
  id: item.id as string,
  account_id: item.account_id as string,
  conversation_id: item.conversation_id as string,
  contact_id: item.contact_id as string,
  message: item.message as string,
  reactions: toReactions(item.reactions as StoredReactions | undefined),
  attachments: (item.attachments as Attachment[] | undefined) ?? [],
  read_at: (item.read_at as number | undefined) ?? null,
  created_at: item.created_at as number,
  updated_at: (item.updated_at as number | undefined) ?? null,
  extras_bytes: (item.extras_bytes as number | undefined) ?? 0,
});

const isMessageItem = (item: Record<string, unknown>) => String(item.sk).startsWith(keys.messageSkPrefix);

/** read_at and updated_at are absent until set, so `if_not_exists` can set read_at once. */
export const messageItem = (owner: Owner, m: Message) => ({
  ...keys.message(owner, m.conversation_id, m.id),
  ...keys.messageIndex(owner, m.id),
  type: 'message',
  id: m.id,
  account_id: m.account_id,
  conversation_id: m.conversation_id,
  contact_id: m.contact_id,
  message: m.message,
  reactions: {},
  attachments: m.attachments,
  created_at: m.created_at,
  extras_bytes: m.extras_bytes,
});

/**
 * Stores the message and its locator, marks its conversation and sender
 * active, all or nothing. Returns false when the conversation does not
 * exist (any more) for this user.
 */
export async function insertMessage(owner: Owner, m: Message): Promise<boolean> {
  try {
    await transactWrite({
      TransactItems: [
        { Put: { TableName: tableName(), Item: messageItem(owner, m), ConditionExpression: 'attribute_not_exists(pk)' } },
        {
          Put: {
            TableName: tableName(),
            Item: { ...keys.messageLocator(owner, m.id), conversation_id: m.conversation_id },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        { Update: touchConversationUpdate(owner, m.conversation_id, m.created_at) },
        { Update: touchContactUpdate(m.account_id, m.contact_id, m.created_at) },
      ],
    });
    return true;
  } catch (error) {
    if (cancellationCodes(error)?.[2] === 'ConditionalCheckFailed') return false;
    throw error;
  }
}

async function conversationIdOf(owner: Owner, messageId: string): Promise<string | undefined> {
  if (!looksLikeId('msg', messageId)) return undefined;
  const out = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.messageLocator(owner, messageId), ConsistentRead: true }),
  );
  return out.Item?.conversation_id as string | undefined;
}

/** Whether the user has this message (a cursor of their message list). */
export const isUserMessage = async (owner: Owner, messageId: string) => (await conversationIdOf(owner, messageId)) !== undefined;

/**
 * The user's message, read with its conversation in one strong BatchGet: a
 * message whose conversation was deleted is already gone for readers,
 * even before the purge reaches it.
 */
export async function findMessage(owner: Owner, messageId: string): Promise<Message | undefined> {
  const conversationId = await conversationIdOf(owner, messageId);
  if (!conversationId) return undefined;
  const messageKey = keys.message(owner, conversationId, messageId);
  const found = await batchGet([keys.conversation(owner, conversationId), messageKey], true);
  const message = found.find((item) => item.sk === messageKey.sk);
  return found.length === 2 && message ? toMessage(message) : undefined;
}

export async function isMessageOf(owner: Owner, conversationId: string, messageId: string): Promise<boolean> {
  if (!looksLikeId('msg', messageId)) return false;
  const out = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.message(owner, conversationId, messageId), ConsistentRead: true }),
  );
  return out.Item !== undefined;
}

export interface ConversationMessages {
  conversation: Conversation;
  /** False when the cursor is not a message of this conversation. */
  cursorFound: boolean;
  page: Page<Message>;
}

/**
 * One conversation's messages, newest first, from its own partition (strong
 * reads). Without a cursor this is one Query: the conversation item sorts
 * above its messages, so it comes first when it exists. With a cursor the
 * Query starts at the cursor's own item, which proves it belongs here, and
 * the conversation is read beside it.
 */
export async function conversationMessages(
  owner: Owner,
  conversationId: string,
  page: CursorPageRequest,
): Promise<ConversationMessages | undefined> {
  if (!looksLikeId('conv', conversationId)) return undefined;
  const pk = keys.conversation(owner, conversationId).pk;
  const cursor = page.startingAfter ?? page.endingBefore;
  const backwards = page.endingBefore !== undefined;
  if (cursor === undefined) {
    const items = await queryItems(
      { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ScanIndexForward: false },
      page.limit + 2,
    );
    if (items[0]?.sk !== keys.conversation(owner, conversationId).sk) return undefined;
    return { conversation: toConversation(items[0]), cursorFound: true, page: toPage(items.slice(1), page.limit, false) };
  }
  const cursorSk = keys.message(owner, conversationId, cursor).sk;
  const [conversation, items] = await Promise.all([
    getConversation(owner, conversationId),
    queryItems(
      {
        KeyConditionExpression: backwards ? 'pk = :pk AND sk >= :cursor' : 'pk = :pk AND sk <= :cursor',
        ExpressionAttributeValues: { ':pk': pk, ':cursor': cursorSk },
        ScanIndexForward: backwards,
      },
      page.limit + 3,
    ),
  ]);
  if (!conversation) return undefined;
  if (items[0]?.sk !== cursorSk) return { conversation, cursorFound: false, page: { items: [], hasMore: false } };
  return { conversation, cursorFound: true, page: toPage(items.slice(1), page.limit, backwards) };
}

function toPage(items: Record<string, unknown>[], limit: number, backwards: boolean): Page<Message> {
  const messages = items.filter(isMessageItem).map(toMessage);
  const page = messages.slice(0, limit);
  return { items: backwards ? page.reverse() : page, hasMore: messages.length > limit };
}

/** All of the user's messages, newest first (gsi2); may include messages of a conversation being purged. */
export async function userMessages(owner: Owner, page: CursorPageRequest): Promise<Page<Message>> {
  const result = await queryIndexPage({ index: 'gsi2', partitions: [keys.userMessagesPartition(owner)], ...page });
  return { items: result.items.map(toMessage), hasMore: result.hasMore };
}

/**
 * One name's part of an update, as a write that commutes with any other
 * request's: `add` appends contacts (new when read) to the name, creating
 * it if absent; `replace` writes the name afresh (removed, then added, in
 * the same request); `remove` drops it.
 */
export type ReactionOp =
  | { kind: 'add'; name: string; contacts: string[] }
  | { kind: 'replace'; name: string; contacts: string[] }
  | { kind: 'remove'; name: string };

/** A change planned against a message as read (shared/messaging/messages.ts plans it). */
export interface MessageWrite {
  text?: string;
  markRead: boolean;
  reactions?: { clearAll: boolean; ops: ReactionOp[]; namesAdded: number };
  attachments?: { clear: boolean; append: Attachment[] };
  bytesDelta: number;
  /** Bounds the write's conditions enforce against the item as stored, whatever ran concurrently. */
  limits: { names: number; contactsPerName: number; attachments: number; extrasBytes: number };
  now: number;
}

/**
 * One UpdateItem made of operations that commute with any other request's:
 * per-name list appends and removals, a list append for attachments,
 * `if_not_exists` for read_at, ADD for the size total. The text and
 * updated_at are plain SETs (last writer wins). The conditions keep the
 * caps whatever ran concurrently; they only fail at a cap (or when the
 * message is gone). Answers the updated message, or 'failed' then.
 */
export async function writeMessage(owner: Owner, current: Message, w: MessageWrite): Promise<Message | 'failed'> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets: string[] = ['updated_at = :now'];
  const removes: string[] = [];
  const conditions: string[] = ['attribute_exists(pk)'];
  values[':now'] = w.now;
  if (w.text !== undefined) {
    sets.push('#text = :text');
    names['#text'] = 'message';
    values[':text'] = w.text;
  }
  if (w.markRead) sets.push('read_at = if_not_exists(read_at, :now)');
  if (w.reactions) {
    if (w.reactions.clearAll) {
      sets.push('reactions = :no_reactions');
      values[':no_reactions'] = {};
    }
    // Names first added by this request follow each other in request order.
    const seq = Date.now() * 100;
    w.reactions.ops.forEach((op, i) => {
      const path = `reactions.#r${i}`;
      names[`#r${i}`] = op.name;
      if (op.kind === 'remove') removes.push(path);
      else if (op.kind === 'replace') {
        sets.push(`${path} = :r${i}`);
        values[`:r${i}`] = [seq + i, ...op.contacts];
      } else {
        sets.push(`${path} = list_append(if_not_exists(${path}, :r${i}_new), :r${i})`);
        values[`:r${i}_new`] = [seq + i];
        values[`:r${i}`] = op.contacts;
        // The list holds the seq too: at most `contactsPerName` contacts after the append.
        conditions.push(`(attribute_not_exists(${path}) OR size(${path}) <= :r${i}_max)`);
        values[`:r${i}_max`] = w.limits.contactsPerName + 1 - op.contacts.length;
      }
    });
    if (w.reactions.namesAdded > 0) {
      conditions.push('size(reactions) <= :names_max');
      values[':names_max'] = w.limits.names - w.reactions.namesAdded;
    }
  }
  if (w.attachments?.clear) {
    sets.push('attachments = :no_attachments');
    values[':no_attachments'] = [];
  } else if (w.attachments && w.attachments.append.length > 0) {
    sets.push('attachments = list_append(attachments, :attachments)');
    values[':attachments'] = w.attachments.append;
    conditions.push('size(attachments) <= :attachments_max');
    values[':attachments_max'] = w.limits.attachments - w.attachments.append.length;
  }
  let add = '';
  if (w.bytesDelta !== 0) {
    add = ' ADD extras_bytes :bytes';
    values[':bytes'] = w.bytesDelta;
    if (w.bytesDelta > 0) {
      conditions.push('extras_bytes <= :bytes_max');
      values[':bytes_max'] = w.limits.extrasBytes - w.bytesDelta;
    }
  }
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.message(owner, current.conversation_id, current.id),
        UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}${add}`,
        ConditionExpression: conditions.join(' AND '),
        ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return toMessage(out.Attributes!);
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    return 'failed';
  }
}

/** Deletes the message and its locator. Returns false when it was not there. */
export async function deleteMessage(owner: Owner, conversationId: string, id: string): Promise<boolean> {
  try {
    await transactWrite({
      TransactItems: [
        { Delete: { TableName: tableName(), Key: keys.message(owner, conversationId, id), ConditionExpression: 'attribute_exists(pk)' } },
        { Delete: { TableName: tableName(), Key: keys.messageLocator(owner, id) } },
      ],
    });
    return true;
  } catch (error) {
    if (cancellationCodes(error)?.[0] === 'ConditionalCheckFailed') return false;
    throw error;
  }
}

/** One batch of a deleted conversation's items to purge: up to `limit` messages and their locators. */
export async function conversationMessageKeys(
  owner: Owner,
  conversationId: string,
  limit: number,
): Promise<{ pk: string; sk: string }[]> {
  const input: Omit<QueryCommandInput, 'TableName'> = {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :messages)',
    ExpressionAttributeValues: { ':pk': keys.conversation(owner, conversationId).pk, ':messages': keys.messageSkPrefix },
    ProjectionExpression: 'pk, sk, id',
    Limit: limit,
  };
  const out = await db().send(new QueryCommand({ TableName: tableName(), ...input }));
  return (out.Items ?? []).flatMap((item) => [
    { pk: item.pk as string, sk: item.sk as string },
    keys.messageLocator(owner, item.id as string),
  ]);
}
