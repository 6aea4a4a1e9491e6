import { batchGet, txCheck, txDelete, txPut, type NamedItems, type TransactItem } from '#shared/db/batch';
import { condition } from '#shared/db/expression';
import { getItem, query, type Key } from '#shared/db/items';
import { keys, ownerValues, type Owner } from '#shared/db/keys';
import { queryIndexPage, type CursorPageRequest, type Page } from '#shared/db/paging';
import { findConversation, otherInThread, toConversation, type Conversation } from '#shared/data/conversations';
import {
  asReadBy,
  contentKey,
  contentKeyOf,
  entryKey,
  locatorKey,
  messageValues,
  toContent,
  toEntry,
  carriesMessage,
  copyOf,
  fromEntry,
  type Entry,
  type Message,
  type NewMessage,
  filesOf,
} from '#shared/data/message-items';
import { looksLikeId } from '#shared/util/ids';

/**
 * The thread's message of an entry as that entry's participant has it, or
 * undefined when the message is gone. `contents` shares the reads of one
 * message among the entries of a batch (a group send is one entry per member).
 */
export async function messageForEntry(
  accountId: string,
  reader: string,
  entry: Entry,
  contents = new Map<string, Promise<Record<string, unknown> | undefined>>(),
): Promise<Message | undefined> {
  const key = contentKey(accountId, entry.thread, entry.id);
  let content = contents.get(key.pk + key.sk);
  if (!content) contents.set(key.pk + key.sk, (content = getItem(key, true)));
  const item = await content;
  return item ? asReadBy(reader, item, entry) : undefined;
}

/**
 * The message as each of these participants has it (their conversation and
 * read state), for those it was delivered to: their locators, then their
 * entries, in two rounds of BatchGet whatever the number of participants.
 */
export async function messageForParticipants(
  content: Record<string, unknown>,
  participants: string[],
): Promise<{ reader: string; message: Message }[]> {
  const m = toContent(content);
  const owners = participants.map((contactId) => ({ accountId: m.account_id, contactId }));
  const locators = await batchGet(
    owners.map((owner) => locatorKey(owner, m.id)),
    true,
  );
  // A locator's pk names its participant (its sk is the same for all): found by pk, not by a scan per participant.
  const byPk = new Map(locators.map((item) => [String(item.pk), item]));
  const entryKeys = owners.flatMap((owner) => {
    const locator = byPk.get(locatorKey(owner, m.id).pk);
    return locator ? [entryKey(owner, String(locator.conversation_id), m.id)] : [];
  });
  const entries = await batchGet(entryKeys, true);
  return entries.map((item) => {
    const reader = keys.message.parse(item as Key)!.user;
    return { reader, message: asReadBy(reader, content, toEntry(item)) };
  });
}

const isEntryItem = (item: Record<string, unknown>) => String(item.sk).startsWith(keys.message.skPrefix);

const isNew = /* @__PURE__ */ condition`attribute_not_exists(pk)`;

/**
 * A message's items for one participant: the entry in their conversation
 * (with their user-wide index entry) and the locator that finds it by id.
 * `readAt`: delivered already read (they had read past it).
 */
export function participantParts(owner: Owner, conversationId: string, m: NewMessage, readAt?: number): NamedItems {
  return [
    [
      `entry:${owner.contactId}`,
      txPut(
        {
          ...entryKey(owner, conversationId, m.id),
          ...keys.userMessages.entry(messageValues(owner, conversationId, m.id)),
          type: 'message_entry',
          id: m.id,
          conversation_id: conversationId,
          thread: m.thread,
          contact_id: m.contact_id,
          created_at: m.created_at,
          ...(readAt === undefined ? {} : { read_at: readAt }),
          ...(m.copied ? copyOf(m, owner.contactId === m.contact_id) : {}),
        },
        isNew,
      ),
    ],
    // A participant has one locator per message: finding it means the message was delivered to them already.
    [`locator:${owner.contactId}`, txPut({ ...locatorKey(owner, m.id), conversation_id: conversationId, thread: m.thread }, isNew)],
  ];
}

/** The message itself, stored once in its thread (read_at and updated_at absent until set, so `if_not_exists` can set read_at once). */
export const contentPut = (m: NewMessage): TransactItem =>
  txPut(
    {
      ...contentKey(m.account_id, m.thread, m.id),
      type: 'message',
      id: m.id,
      account_id: m.account_id,
      thread: m.thread,
      contact_id: m.contact_id,
      message: m.message,
      reactions: {},
      attachments: m.attachments,
      // The uploaded files, as a set: what a purge finds without reading each attachment (shared/purge/conversation.ts).
      ...(filesOf(m.attachments).length > 0 ? { file_ids: new Set(filesOf(m.attachments)) } : {}),
      created_at: m.created_at,
      extras_bytes: m.extras_bytes,
      ...(m.copied ? { copied: true } : {}),
    },
    isNew,
  );

/** Transaction part that holds a delivery to the message still existing (a retraction may have deleted it). */
export const contentExists = (m: Pick<Message, 'account_id' | 'thread' | 'id'>): TransactItem =>
  txCheck(contentKeyOf(m), condition`attribute_exists(pk)`);

/** Where the user has this message: their conversation, and its thread. */
async function locate(owner: Owner, messageId: string): Promise<{ conversation_id: string; thread: string } | undefined> {
  if (!looksLikeId('msg', messageId)) return undefined;
  const item = await getItem(locatorKey(owner, messageId), true);
  return item ? { conversation_id: item.conversation_id as string, thread: item.thread as string } : undefined;
}

/** Whether the user has this message (a cursor of their message list). */
export const isUserMessage = async (owner: Owner, messageId: string) => (await locate(owner, messageId)) !== undefined;

const sameKey = (a: Record<string, unknown>, b: Key) => a.pk === b.pk && a.sk === b.sk;

/**
 * The user's message, read with their conversation, their entry and the
 * thread's message in one strong BatchGet: a message whose conversation was
 * deleted is already gone for readers, even before the purge reaches it.
 *
 * `toChange`: the user means to change it (react, read, edit, delete). A
 * removed member of a group keeps what they received but changes none of
 * it, so in a group's thread their membership is read in the same BatchGet
 * and, without it, the message is not found.
 */
export async function findMessage(owner: Owner, messageId: string, toChange = false): Promise<Message | undefined> {
  const at = await locate(owner, messageId);
  if (!at) return undefined;
  const member =
    toChange && isGroupThread(at.thread) ? keys.groupMember.key({ acct: owner.accountId, grp: at.thread, ct: owner.contactId }) : undefined;
  // A change of a one-to-one message changes the other participant's copy too: where it is comes with the rest.
  const peer = toChange ? otherInThread(at.thread, owner.contactId) : undefined;
  const peerLocator = peer ? locatorKey({ accountId: owner.accountId, contactId: peer }, messageId) : undefined;
  const wanted = [
    keys.conversation.key({ ...ownerValues(owner), conv: at.conversation_id }),
    entryKey(owner, at.conversation_id, messageId),
    contentKey(owner.accountId, at.thread, messageId),
    ...(member ? [member] : []),
    ...(peerLocator ? [peerLocator] : []),
  ];
  const found = await batchGet(wanted, true);
  const [conversation, entry, content] = wanted.map((key) => found.find((item) => sameKey(item, key)));
  if (member && !found.some((item) => sameKey(item, member))) return undefined;
  if (!conversation || !entry || !content) return undefined;
  const message = asReadBy(owner.contactId, content, toEntry(entry));
  if (!peerLocator) return message;
  const located = found.find((item) => sameKey(item, peerLocator));
  return { ...message, peerConversationId: located ? String(located.conversation_id) : null };
}

/** A group's thread is named by the group id; a one-to-one thread by its two contacts. */
const isGroupThread = (thread: string) => thread.startsWith('grp_');

export async function isMessageOf(owner: Owner, conversationId: string, messageId: string): Promise<boolean> {
  if (!looksLikeId('msg', messageId)) return false;
  return (await getItem(entryKey(owner, conversationId, messageId), true)) !== undefined;
}

/**
 * The thread's messages for these entries (one strong BatchGet), in the
 * entries' order. An entry whose message is gone (a retraction still on
 * its way to this participant) is left out.
 */
async function withContents(
  owner: Owner,
  entries: Entry[],
  also: Key[] = [],
): Promise<{ messages: Message[]; also: Record<string, unknown>[] }> {
  if (entries.length === 0 && also.length === 0) return { messages: [], also: [] };
  const contentKeys = entries.map((e) => contentKey(owner.accountId, e.thread, e.id));
  const found = await batchGet([...contentKeys, ...also], true);
  const byKey = new Map(found.map((item) => [`${item.pk}|${item.sk}`, item]));
  const messages = entries.flatMap((e, i) => {
    const content = byKey.get(`${contentKeys[i]!.pk}|${contentKeys[i]!.sk}`);
    return content ? [asReadBy(owner.contactId, content, e)] : [];
  });
  const alsoFound = also.flatMap((key) => {
    const item = byKey.get(`${key.pk}|${key.sk}`);
    return item ? [item] : [];
  });
  return { messages, also: alsoFound };
}

export interface ConversationMessages {
  conversation: Conversation;
  /** False when the cursor is not a message of this conversation. */
  cursorFound: boolean;
  page: Page<Message>;
}

/**
 * One conversation's messages, newest first, from the entries in its own
 * partition (strong reads), then the thread's messages in one BatchGet.
 * Without a cursor the entries are one Query: the conversation item sorts
 * above them, so it comes first when it exists. With a cursor the Query
 * starts at the cursor's own entry, which proves it belongs here, and the
 * conversation is read beside it. Whatever the group's size, a page reads
 * only its own entries and messages.
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
    return { conversation: toConversation(items[0]), cursorFound: true, page: await toPage(owner, items.slice(1), page.limit, false) };
  }
  const cursorSk = entryKey(owner, conversationId, cursor).sk;
  const [found, items] = await Promise.all([
    findConversation(owner, conversationId),
    query({ partition: conversation.pk, sort: [backwards ? '>=' : '<=', cursorSk], forward: backwards }, page.limit + 3),
  ]);
  if (!found) return undefined;
  if (items[0]?.sk !== cursorSk) return { conversation: found, cursorFound: false, page: { items: [], hasMore: false } };
  return { conversation: found, cursorFound: true, page: await toPage(owner, items.slice(1), page.limit, backwards) };
}

/** Entries that carry their message (a one-to-one thread's) are the page as read; the others' messages come in one BatchGet. */
async function toPage(owner: Owner, items: Record<string, unknown>[], limit: number, backwards: boolean): Promise<Page<Message>> {
  const entryItems = items.filter(isEntryItem);
  const page = entryItems.slice(0, limit);
  const stored = page.filter((item) => !carriesMessage(item)).map((item) => toEntry(item));
  const fetched = new Map((await withContents(owner, stored)).messages.map((m) => [m.id, m]));
  const messages = page.flatMap((item) => {
    const m = carriesMessage(item) ? fromEntry(owner.contactId, owner.accountId, item) : fetched.get(String(item.id));
    return m ? [m] : [];
  });
  return { items: backwards ? messages.reverse() : messages, hasMore: entryItems.length > limit };
}

/** A page of the user-wide list: the messages still readable, and the entries read (for the next read's cursor). */
export interface UserMessagesRead {
  items: Message[];
  hasMore: boolean;
  /** Ids of the entries read, in the order read. */
  read: string[];
}

/**
 * All of the user's messages, newest first (gsi2), in one BatchGet with
 * their conversations: entries of a conversation being purged are dropped.
 */
export async function userMessages(owner: Owner, page: CursorPageRequest): Promise<UserMessagesRead> {
  const result = await queryIndexPage({
    index: keys.userMessages.index,
    partitions: [keys.userMessages.partition(ownerValues(owner))],
    ...page,
  });
  const entries = result.items.map((item) => toEntry(item));
  const conversations = [...new Set(entries.map((e) => e.conversation_id))].map((conv) =>
    keys.conversation.key({ ...ownerValues(owner), conv }),
  );
  const { messages, also } = await withContents(owner, entries, conversations);
  const live = new Set(also.map((item) => item.id as string));
  return { items: messages.filter((m) => live.has(m.conversation_id)), hasMore: result.hasMore, read: entries.map((e) => e.id) };
}

/** What a retraction needs to know of a participant's entry: where it is, and whether they had read it. */
export async function entryOf(owner: Owner, messageId: string): Promise<{ conversationId: string; read: boolean | 'any' } | undefined> {
  const at = await locate(owner, messageId);
  if (!at) return undefined;
  const entry = await getItem(entryKey(owner, at.conversation_id, messageId), true);
  // A locator without its entry (its conversation's purge got there first): nothing to count.
  return { conversationId: at.conversation_id, read: entry ? entry.read_at !== undefined : 'any' };
}

/**
 * Removes a participant's entry and locator; the condition holds the read
 * state the retraction planned with (an unread entry's removal also takes
 * one off their unread count). 'any': whatever its state (the sender's own).
 */
export function participantGone(owner: Owner, conversationId: string, messageId: string, wasRead: boolean | 'any'): NamedItems {
  const when = wasRead === 'any' ? undefined : wasRead ? condition`attribute_exists(read_at)` : condition`attribute_not_exists(read_at)`;
  return [
    [`entry:${owner.contactId}`, txDelete(entryKey(owner, conversationId, messageId), when)],
    [`locator:${owner.contactId}`, txDelete(locatorKey(owner, messageId))],
  ];
}

/** The thread's message removed, for everyone (its sender's delete). */
export const contentGone = (m: Pick<Message, 'account_id' | 'thread' | 'id'>): TransactItem =>
  txDelete(contentKeyOf(m), condition`attribute_exists(pk)`);

/**
 * One batch of a deleted conversation's items to purge: up to `limit` of
 * its entries and their locators (the thread keeps the messages), and
 * which messages of which thread they were.
 */
export async function conversationMessageBatch(
  owner: Owner,
  conversationId: string,
  limit: number,
): Promise<{ keys: Key[]; messages: { id: string; thread: string }[] }> {
  const items = await query(
    {
      partition: keys.message.partition({ ...ownerValues(owner), conv: conversationId }),
      sort: ['begins_with', keys.message.skPrefix],
      projection: 'pk, sk, id, thread',
    },
    limit,
    1,
  );
  return {
    keys: items.flatMap((item) => [{ pk: item.pk as string, sk: item.sk as string }, locatorKey(owner, item.id as string)]),
    messages: items.map((item) => ({ id: String(item.id), thread: String(item.thread) })),
  };
}

/** The uploaded files each of these messages of one thread attaches (those with none are left out). */
export async function filesOfMessages(accountId: string, thread: string, ids: string[]): Promise<Map<string, string[]>> {
  const items = await batchGet(ids.map((id) => contentKey(accountId, thread, id)));
  const found = new Map<string, string[]>();
  for (const item of items) {
    const files = item.file_ids instanceof Set ? [...(item.file_ids as Set<string>)] : [];
    if (files.length > 0) found.set(String(item.id), files);
  }
  return found;
}
