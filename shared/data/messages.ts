import * as v from 'valibot';
import { parseItem } from '#shared/db/item-schema';
import { isRecord } from '#shared/util/object-schema';
import { batchGet, transactNamed, txDelete, txPut } from '#shared/db/batch';
import { attr, condition, update } from '#shared/db/expression';
import { getItem, query, unlessConditionFails, updateItem, type Key } from '#shared/db/items';
import { keys, ownerValues, type Owner } from '#shared/db/keys';
import { queryIndexPage, type CursorPageRequest, type Page } from '#shared/db/paging';
import { touchContactUpdate } from '#shared/data/contacts';
import { findConversation, toConversation, touchConversationUpdate, type Conversation } from '#shared/data/conversations';
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

const toReactions = (stored: StoredReactions): ReactionEntry[] =>
  Object.entries(stored)
    .sort(([a, [x]], [b, [y]]) => x - y || (a < b ? -1 : 1))
    .map(([name, [, ...contacts]]) => ({ name, contacts: [...new Set(contacts)] }));

// Built in /* @__PURE__ */ calls, so that esbuild drops them from functions that never read these items (shared/db/item-schema.ts).
const storedReaction = /* @__PURE__ */ (() => v.tupleWithRest([v.number()], v.string()))();

/**
 * A map of name to `[seq, ...contacts]`. Not v.record, which takes an array
 * for a map and leaves out keys named `constructor`, `prototype` or
 * `__proto__` without an issue: a stored value that is not such a map must
 * fail the parse, and one that is must read as stored.
 */
const storedReactions = /* @__PURE__ */ (() =>
  v.custom<StoredReactions>(
    (value) => isRecord(value) && Object.values(value).every((entry) => v.is(storedReaction, entry)),
    'a map of reaction names to [sequence, ...contacts]',
  ))();

const attachmentItem = /* @__PURE__ */ (() =>
  v.object({
    id: v.string(),
    type: v.picklist(['image', 'video', 'audio', 'file']),
    url: v.string(),
    name: v.nullable(v.string()),
    mime_type: v.nullable(v.string()),
    size: v.nullable(v.number()),
  }))();

// v.optional(x, d): absent, read as d; v.nullish(x, null): null or absent, read as null.
const messageSchema = /* @__PURE__ */ (() =>
  v.object({
    id: v.string(),
    account_id: v.string(),
    conversation_id: v.string(),
    contact_id: v.string(),
    message: v.string(),
    // An absent map reads as no reactions.
    reactions: v.pipe(v.optional(storedReactions, {}), v.transform(toReactions)),
    attachments: v.optional(v.array(attachmentItem), []),
    read_at: v.nullish(v.number(), null),
    created_at: v.number(),
    updated_at: v.nullish(v.number(), null),
    extras_bytes: v.optional(v.number(), 0),
  }))();

const toMessage = (item: Record<string, unknown>): Message => parseItem(messageSchema, item);

const isMessageItem = (item: Record<string, unknown>) => String(item.sk).startsWith(keys.message.skPrefix);

const messageValues = (owner: Owner, conv: string, msg: string) => ({ ...ownerValues(owner), conv, msg });
const messageKey = (owner: Owner, conv: string, msg: string) => keys.message.key(messageValues(owner, conv, msg));
const locatorKey = (owner: Owner, msg: string) => keys.messageLocator.key({ ...ownerValues(owner), msg });

/** read_at and updated_at are absent until set, so `if_not_exists` can set read_at once. */
export const messageItem = (owner: Owner, m: Message) => ({
  ...messageKey(owner, m.conversation_id, m.id),
  ...keys.userMessages.entry(messageValues(owner, m.conversation_id, m.id)),
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
  const isNew = condition`attribute_not_exists(pk)`;
  const failed = await transactNamed([
    ['message', txPut(messageItem(owner, m), isNew)],
    ['locator', txPut({ ...locatorKey(owner, m.id), conversation_id: m.conversation_id }, isNew)],
    ['conversation', touchConversationUpdate(owner, m.conversation_id, m.created_at)],
    ['sender', touchContactUpdate(m.account_id, m.contact_id, m.created_at)],
  ]);
  if (failed.length === 0) return true;
  if (failed.includes('conversation')) return false;
  throw new Error(`storing a message failed on ${failed.join(', ')}`);
}

async function conversationIdOf(owner: Owner, messageId: string): Promise<string | undefined> {
  if (!looksLikeId('msg', messageId)) return undefined;
  return (await getItem(locatorKey(owner, messageId), true))?.conversation_id as string | undefined;
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
  const wanted = messageKey(owner, conversationId, messageId);
  const found = await batchGet([keys.conversation.key({ ...ownerValues(owner), conv: conversationId }), wanted], true);
  const message = found.find((item) => item.sk === wanted.sk);
  return found.length === 2 && message ? toMessage(message) : undefined;
}

export async function isMessageOf(owner: Owner, conversationId: string, messageId: string): Promise<boolean> {
  if (!looksLikeId('msg', messageId)) return false;
  return (await getItem(messageKey(owner, conversationId, messageId), true)) !== undefined;
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
  const conversation = keys.conversation.key({ ...ownerValues(owner), conv: conversationId });
  const cursor = page.startingAfter ?? page.endingBefore;
  const backwards = page.endingBefore !== undefined;
  if (cursor === undefined) {
    const items = await query({ partition: conversation.pk, forward: false }, page.limit + 2);
    if (items[0]?.sk !== conversation.sk) return undefined;
    return { conversation: toConversation(items[0]), cursorFound: true, page: toPage(items.slice(1), page.limit, false) };
  }
  const cursorSk = messageKey(owner, conversationId, cursor).sk;
  const [found, items] = await Promise.all([
    findConversation(owner, conversationId),
    query({ partition: conversation.pk, sort: [backwards ? '>=' : '<=', cursorSk], forward: backwards }, page.limit + 3),
  ]);
  if (!found) return undefined;
  if (items[0]?.sk !== cursorSk) return { conversation: found, cursorFound: false, page: { items: [], hasMore: false } };
  return { conversation: found, cursorFound: true, page: toPage(items.slice(1), page.limit, backwards) };
}

function toPage(items: Record<string, unknown>[], limit: number, backwards: boolean): Page<Message> {
  const messages = items.filter(isMessageItem).map(toMessage);
  const page = messages.slice(0, limit);
  return { items: backwards ? page.reverse() : page, hasMore: messages.length > limit };
}

/** All of the user's messages, newest first (gsi2); may include messages of a conversation being purged. */
export async function userMessages(owner: Owner, page: CursorPageRequest): Promise<Page<Message>> {
  const result = await queryIndexPage({
    index: keys.userMessages.index,
    partitions: [keys.userMessages.partition(ownerValues(owner))],
    ...page,
  });
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
  const write = update().set`updated_at = ${w.now}`.when`attribute_exists(pk)`;
  if (w.text !== undefined) write.set`${attr('message')} = ${w.text}`;
  if (w.markRead) write.set`read_at = if_not_exists(read_at, ${w.now})`;
  if (w.reactions) {
    if (w.reactions.clearAll) write.set`reactions = ${{}}`;
    // Names first added by this request follow each other in request order.
    const seq = Date.now() * 100;
    w.reactions.ops.forEach((op, i) => {
      const name = attr(op.name);
      if (op.kind === 'remove') write.remove`reactions.${name}`;
      else if (op.kind === 'replace') write.set`reactions.${name} = ${[seq + i, ...op.contacts]}`;
      else {
        write.set`reactions.${name} = list_append(if_not_exists(reactions.${name}, ${[seq + i]}), ${op.contacts})`;
        // The list holds the seq too: at most `contactsPerName` contacts after the append.
        write.when`(attribute_not_exists(reactions.${name}) OR size(reactions.${name}) <= ${w.limits.contactsPerName + 1 - op.contacts.length})`;
      }
    });
    if (w.reactions.namesAdded > 0) write.when`size(reactions) <= ${w.limits.names - w.reactions.namesAdded}`;
  }
  if (w.attachments?.clear) write.set`attachments = ${[]}`;
  else if (w.attachments && w.attachments.append.length > 0) {
    write.set`attachments = list_append(attachments, ${w.attachments.append})`;
    write.when`size(attachments) <= ${w.limits.attachments - w.attachments.append.length}`;
  }
  if (w.bytesDelta !== 0) {
    write.add`extras_bytes ${w.bytesDelta}`;
    if (w.bytesDelta > 0) write.when`extras_bytes <= ${w.limits.extrasBytes - w.bytesDelta}`;
  }
  const out = await unlessConditionFails(updateItem(messageKey(owner, current.conversation_id, current.id), write, 'ALL_NEW'));
  return out ? toMessage(out) : 'failed';
}

/** Deletes the message and its locator. Returns false when it was not there. */
export async function removeMessage(owner: Owner, conversationId: string, id: string): Promise<boolean> {
  const failed = await transactNamed([
    ['message', txDelete(messageKey(owner, conversationId, id), condition`attribute_exists(pk)`)],
    ['locator', txDelete(locatorKey(owner, id))],
  ]);
  return failed.length === 0;
}

/** One batch of a deleted conversation's items to purge: up to `limit` messages and their locators. */
export async function conversationMessageKeys(owner: Owner, conversationId: string, limit: number): Promise<Key[]> {
  const items = await query(
    {
      partition: keys.message.partition({ ...ownerValues(owner), conv: conversationId }),
      sort: ['begins_with', keys.message.skPrefix],
      projection: 'pk, sk, id',
    },
    limit,
    1,
  );
  return items.flatMap((item) => [{ pk: item.pk as string, sk: item.sk as string }, locatorKey(owner, item.id as string)]);
}
