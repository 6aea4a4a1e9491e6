import { txUpdate, type NamedItems } from '#shared/db/batch';
import { update } from '#shared/db/expression';
import { conditionHeld, query, updateItem } from '#shared/db/items';
import { keys, ownerValues, type Owner } from '#shared/db/keys';
import { contentKey, entryKey } from '#shared/data/message-items';
import { otherInThread } from '#shared/data/conversations';

/**
 * Read marks: a reader's read time on their entries of others' messages, and
 * the sender's first-read time on the message (shared/messaging/read-state.ts
 * reads a range with them).
 */

/** An entry of another participant's message, unread by this user. */
export interface UnreadEntry {
  id: string;
  thread: string;
  /** The sender's conversation, on an entry that carries its message: the sender's copy records the first read too. */
  senderConversationId?: string;
}

/**
 * The user's unread entries of others' messages in (after, through], oldest
 * first, reading at most `scan` entries; `last` is the last entry read (the
 * next call's `after`), undefined when the range is exhausted.
 */
export async function unreadEntries(
  owner: Owner,
  conversationId: string,
  after: string | null,
  through: string,
  scan: number,
): Promise<{ unread: UnreadEntry[]; last: string | undefined }> {
  const items = await query(
    {
      partition: keys.message.partition({ ...ownerValues(owner), conv: conversationId }),
      sort: ['between', entryKey(owner, conversationId, after ?? '').sk, entryKey(owner, conversationId, through).sk],
      projection: 'id, thread, contact_id, read_at, sender_conversation_id',
    },
    // As many calls as it takes: a Query stops at 1 MB read (the projection does not shrink that), and entries
    // carrying their messages can pass it before `scan` items; fewer than `scan` must mean the range's end.
    scan,
  );
  const unread = items
    .filter((item) => item.id !== after && item.contact_id !== owner.contactId && item.read_at === undefined)
    .map((item) => ({
      id: item.id as string,
      thread: item.thread as string,
      ...(typeof item.sender_conversation_id === 'string' ? { senderConversationId: item.sender_conversation_id } : {}),
    }));
  return { unread, last: items.length < scan ? undefined : (items.at(-1)!.id as string) };
}

/** Transaction part: the message's first read by a participant other than its sender (the sender's read_at), if not set yet. */
const firstRead = (accountId: string, m: { thread: string; id: string }, at: number) =>
  txUpdate(contentKey(accountId, m.thread, m.id), update().set`read_at = if_not_exists(read_at, ${at})`.when`attribute_exists(pk)`);

/**
 * Transaction parts of reading one entry: the reader's read time and, in a
 * one-to-one thread (whose message has one reader), the sender's first-read
 * time on the message. A group's message would be written by every reader
 * at once: there the first-read time is set after the transaction
 * (`markFirstRead`), so readers never contend on it.
 */
export function readParts(
  owner: Owner,
  conversationId: string,
  entry: UnreadEntry,
  at: number,
  { toSender = true, heard = true }: { toSender?: boolean; heard?: boolean } = {},
): NamedItems {
  const oneReader = entry.thread.includes('+');
  const sender =
    oneReader && toSender && entry.senderConversationId !== undefined ? otherInThread(entry.thread, owner.contactId) : undefined;
  const read = update().set`read_at = ${at}`;
  // The change stream tells the sender of a read unless the entry says it was unheard (a member removed from the group).
  if (!heard) read.set`silent_read = ${true}`;
  return [
    [
      `entry:${entry.id}`,
      txUpdate(entryKey(owner, conversationId, entry.id), read.when`attribute_exists(pk) AND attribute_not_exists(read_at)`),
    ],
    ...(oneReader ? ([[`content:${entry.id}`, firstRead(owner.accountId, entry, at)]] as NamedItems) : []),
    ...(sender
      ? ([
          [
            `sender:${entry.id}`,
            txUpdate(
              entryKey({ accountId: owner.accountId, contactId: sender }, entry.senderConversationId!, entry.id),
              update().set`first_read_at = if_not_exists(first_read_at, ${at})`.when`attribute_exists(pk)`,
            ),
          ],
        ] as NamedItems)
      : []),
  ];
}

/** The sender's first-read time on group messages just read (the first reader's wins; a later one's condition fails, harmlessly). */
export async function markFirstRead(accountId: string, entries: UnreadEntry[], at: number): Promise<void> {
  await Promise.all(
    entries
      .filter((entry) => !entry.thread.includes('+'))
      .map((entry) =>
        conditionHeld(
          updateItem(
            contentKey(accountId, entry.thread, entry.id),
            update().set`read_at = ${at}`.when`attribute_exists(pk) AND attribute_not_exists(read_at)`,
          ),
        ),
      ),
  );
}
