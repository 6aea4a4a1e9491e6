import * as v from 'valibot';
import { parseItem } from '#shared/db/item-schema';
import { keys, ownerValues, type Owner } from '#shared/db/keys';
import { isRecord } from '#shared/util/object-schema';

/*
 * A message's items: the message stored once in its thread, each
 * participant's entry of it, and the locator that finds an entry by id;
 * their shapes, keys and how they read, in one place for every module
 * that reads or writes them.
 */

export interface Attachment {
  id: string;
  type: 'image' | 'video' | 'audio' | 'file';
  /** An external link as given; null for an uploaded file, whose URL is made for each reader (shared/files/urls.ts). */
  url: string | null;
  name: string | null;
  mime_type: string | null;
  size: number | null;
  /** The uploaded file it shows (shared/files/). */
  file_id?: string;
}

/** The uploaded files a list of attachments shows, each once. */
export const filesOf = (list: Attachment[]) => [...new Set(list.flatMap((a) => (a.file_id === undefined ? [] : [a.file_id])))];

/** Reactions keep first-added order, so they are a list of named entries. */
export interface ReactionEntry {
  name: string;
  contacts: string[];
}

/** A message as one participant reads it: the thread's message with their conversation and read state. */
export interface Message {
  id: string;
  account_id: string;
  /** The reader's own conversation. */
  conversation_id: string;
  /** The thread it is stored in (see keys.threadMessage). */
  thread: string;
  /** The sender. */
  contact_id: string;
  message: string;
  reactions: ReactionEntry[];
  attachments: Attachment[];
  /** The reader's read time; for the sender, when another participant first read it. */
  read_at: number | null;
  created_at: number;
  updated_at: number | null;
  /** Encoded size of the reactions and attachments (see shared/messaging/size.ts); only ever over-counts. */
  extras_bytes: number;
  /** A one-to-one message whose two entries carry a copy of it (see `copyOf`); absent on older ones and in groups. */
  copied?: boolean;
  /** Read for a change of a copied message: the other participant's conversation holding it, null when they have none. */
  peerConversationId?: string | null;
}

/** What a new message stores once, in its thread; `sender_conversation_id` goes on the recipient's copy (their read marks reach the sender's). */
export type NewMessage = Omit<Message, 'conversation_id' | 'read_at' | 'updated_at' | 'reactions'> & { sender_conversation_id?: string };

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
    url: v.nullish(v.string(), null),
    name: v.nullable(v.string()),
    mime_type: v.nullable(v.string()),
    size: v.nullable(v.number()),
    file_id: v.optional(v.string()),
  }))();

// v.optional(x, d): absent, read as d; v.nullish(x, null): null or absent, read as null.
/** The message as stored once in its thread; read_at there is the first read by a participant other than the sender. */
const contentSchema = /* @__PURE__ */ (() =>
  v.object({
    id: v.string(),
    account_id: v.string(),
    thread: v.string(),
    contact_id: v.string(),
    message: v.string(),
    // An absent map reads as no reactions.
    reactions: v.pipe(v.optional(storedReactions, {}), v.transform(toReactions)),
    attachments: v.optional(v.array(attachmentItem), []),
    read_at: v.nullish(v.number(), null),
    created_at: v.number(),
    updated_at: v.nullish(v.number(), null),
    extras_bytes: v.optional(v.number(), 0),
    copied: v.optional(v.boolean()),
  }))();

/** A participant's entry: which of their conversations holds the message, and when they read it. */
const entrySchema = /* @__PURE__ */ (() =>
  v.object({
    id: v.string(),
    conversation_id: v.string(),
    thread: v.string(),
    contact_id: v.string(),
    read_at: v.nullish(v.number(), null),
    /** Read by a member removed from the group: the sender is not told. */
    silent_read: v.optional(v.boolean()),
  }))();

export type Entry = v.InferOutput<typeof entrySchema>;

/** The thread's message as stored, before a reader's conversation and read state are added. */
export const toContent = (item: Record<string, unknown>) => parseItem(contentSchema, item);

/** A thread's stored message (from a change stream image) as one participant's conversation shows it. */
export const toThreadMessage = (item: Record<string, unknown>, conversationId: string): Message => ({
  ...parseItem(contentSchema, item),
  conversation_id: conversationId,
});

/** The message as `reader` has it: their conversation, and their read time (the sender's is the first other reader's). */
export function asReadBy(reader: string, content: Record<string, unknown>, entry: Entry): Message {
  const m = parseItem(contentSchema, content);
  return { ...m, conversation_id: entry.conversation_id, read_at: m.contact_id === reader ? m.read_at : entry.read_at };
}

/**
 * A one-to-one message as its participant's entry carries it: the fields
 * every change writes to the thread's message and to both entries at once
 * (shared/data/message-writes.ts), so a page is its Query alone. The
 * sender's entry keeps the first read by the other participant as
 * `first_read_at` (the thread's `read_at`).
 */
export const copyOf = (m: NewMessage, forSender: boolean) => ({
  message: m.message,
  reactions: {},
  attachments: m.attachments,
  extras_bytes: m.extras_bytes,
  ...(forSender || m.sender_conversation_id === undefined ? {} : { sender_conversation_id: m.sender_conversation_id }),
});

/** Whether a stored entry carries its message. */
export const carriesMessage = (item: Record<string, unknown>) => typeof item.message === 'string';

/** The message from an entry that carries it, as that entry's participant reads it. */
export const fromEntry = (reader: string, accountId: string, item: Record<string, unknown>): Message =>
  asReadBy(reader, { ...item, account_id: accountId, read_at: item.first_read_at, copied: true }, toEntry(item));

/** An entry (stored, or a change stream image) as read: its message id, thread, sender, conversation and read time. */
export const toEntry = (item: Record<string, unknown>) => parseItem(entrySchema, item);

/** Where a participant's entry is: its key, and its place in their user-wide list. */
export const messageValues = (owner: Owner, conv: string, msg: string) => ({ ...ownerValues(owner), conv, msg });
export const entryKey = (owner: Owner, conv: string, msg: string) => keys.message.key(messageValues(owner, conv, msg));
export const locatorKey = (owner: Owner, msg: string) => keys.messageLocator.key({ ...ownerValues(owner), msg });
export const contentKey = (accountId: string, thread: string, msg: string) => keys.threadMessage.key({ acct: accountId, thread, msg });
export const contentKeyOf = (m: Pick<Message, 'account_id' | 'thread' | 'id'>) => contentKey(m.account_id, m.thread, m.id);
