import { groupMembers } from '#shared/data/group-members';
import { conversationIdFor, findConversation, otherInThread } from '#shared/data/conversations';
import { toEntry, toThreadMessage, type Entry, type Message } from '#shared/data/message-items';
import { messageForEntry, messageForParticipants } from '#shared/data/messages';
import { keys, type Owner } from '#shared/db/keys';
import { getContacts, type Contact } from '#shared/data/contacts';
import { presentMessages, type ContactLoader } from '#shared/messaging/present';
import { conversationEvents } from '#shared/stream/account';
import type { Change } from '#shared/stream/change';
import { event, eventId, same, type EventType } from '#shared/stream/event';

/**
 * The change stream in each user's view: the account's events, each as the
 * user it goes to sees it, and `message.read` to a sender when another
 * participant reads their message (what the realtime WebSocket carries,
 * docs/realtime.md). `user` is the user whose view `data.object` is: the
 * one whose connections get the frame.
 */
export interface UserViewEvent {
  id: string;
  type: EventType | 'message.read';
  created_at: number;
  user: string;
  /** `message.read`: also who read the message and when. */
  data: { object: unknown; reader?: string; read_at?: number };
}

export interface UserEvent {
  owner: Owner;
  event: UserViewEvent;
}

/** Reads shared by the changes of one batch: a group send is one entry change per member, all of one message. */
export interface BatchReads {
  contents: Map<string, Promise<Record<string, unknown> | undefined>>;
  /** Each sender's contact, read once per batch (as it is now, as after a write), not once per frame. */
  senders: Map<string, Promise<Contact | undefined>>;
}

export const batchReads = (): BatchReads => ({ contents: new Map(), senders: new Map() });

/** `presentMessages`' contact loader over the batch's reads: a sender not read yet in this batch is read now. */
const batchSenders =
  (reads: BatchReads): ContactLoader =>
  async (accountId, ids) => {
    const missing = ids.filter((id) => !reads.senders.has(`${accountId}#${id}`));
    if (missing.length > 0) {
      const read = getContacts(accountId, missing);
      for (const id of missing)
        reads.senders.set(
          `${accountId}#${id}`,
          read.then((found) => found.get(id)),
        );
    }
    const found = new Map<string, Contact>();
    for (const id of ids) {
      const contact = await reads.senders.get(`${accountId}#${id}`);
      if (contact) found.set(id, contact);
    }
    return found;
  };

const userEvent = (accountId: string, e: { event: Omit<UserViewEvent, 'user'> & { user?: string } }, user: string): UserEvent => ({
  owner: { accountId, contactId: user },
  event: { ...e.event, user },
});

const presented = (accountId: string, messages: Message[], reads: BatchReads) =>
  presentMessages(accountId, messages, { load: batchSenders(reads) });

/**
 * A participant's entry is the message as delivered to them: its insert is
 * `message.created` in their view (the sender's own entry too, for their
 * other devices); its first read time is `message.updated` in the reader's
 * view (their other devices) and `message.read` for the sender; its
 * removal while their conversation stays is `message.deleted` (the sender
 * deleted it). Entries removed with a deleted conversation send nothing:
 * `conversation.deleted` says it.
 */
async function entryEvents(change: Change, reads: BatchReads): Promise<UserEvent[]> {
  const at = keys.message.parse(change);
  if (!at) return [];
  const { acct: accountId, user } = at;
  if (change.eventName === 'INSERT') {
    const m = await messageForEntry(accountId, user, toEntry(change.newImage!), reads.contents);
    if (!m) return [];
    const [object] = await presented(accountId, [m], reads);
    return [userEvent(accountId, event(change, accountId, 'message.created', object, user, user), user)];
  }
  if (change.eventName === 'MODIFY') {
    const [before, after] = [toEntry(change.oldImage!), toEntry(change.newImage!)];
    const sender = after.contact_id;
    if (before.read_at !== null || after.read_at === null || sender === user) return [];
    const own = await readerEvents(change, accountId, user, after, reads);
    return after.silent_read ? own : [...own, ...(await readEvents(change, accountId, user, after, reads))];
  }
  const gone = toEntry(change.oldImage!);
  if (!(await findConversation({ accountId, contactId: user }, gone.conversation_id))) return [];
  const object = { id: gone.id, conversation_id: gone.conversation_id, deleted: true };
  return [userEvent(accountId, event(change, accountId, 'message.deleted', object, user, user), user)];
}

/**
 * `reader` read the message of this entry: their own view of it changed
 * (`read_at` set), which their other devices hear as `message.updated`, as
 * they hear the reader's other own actions.
 */
async function readerEvents(change: Change, accountId: string, reader: string, entry: Entry, reads: BatchReads): Promise<UserEvent[]> {
  const m = await messageForEntry(accountId, reader, entry, reads.contents);
  if (!m) return [];
  const [object] = await presented(accountId, [m], reads);
  return [userEvent(accountId, event(change, accountId, 'message.updated', object, reader, reader), reader)];
}

/** `reader` read the message of this entry (its `read_at` just set): the sender hears it, with the message in their own view. */
async function readEvents(change: Change, accountId: string, reader: string, entry: Entry, reads: BatchReads): Promise<UserEvent[]> {
  const readAt = entry.read_at!;
  const sender = entry.contact_id;
  const target = entry.thread.startsWith('grp_') ? entry.thread : otherInThread(entry.thread, sender);
  const conversationId = target && (await conversationIdFor({ accountId, contactId: sender }, target));
  if (!conversationId) return [];
  const m = await messageForEntry(accountId, sender, { ...entry, conversation_id: conversationId, read_at: null }, reads.contents);
  if (!m) return [];
  const [object] = await presented(accountId, [{ ...m, read_at: m.read_at ?? readAt }], reads);
  return [
    {
      owner: { accountId, contactId: sender },
      event: {
        id: eventId(change, 'message.read', sender),
        type: 'message.read',
        created_at: Math.floor(change.createdMs / 1000),
        user: sender,
        data: { object, reader, read_at: readAt },
      },
    },
  ];
}

/**
 * An edit, a reaction or an attachment changes the thread's message once:
 * every participant it was delivered to hears `message.updated` in their
 * own view. (Its first read time changing is `message.read`, above.)
 */
async function threadMessageEvents(change: Change, reads: BatchReads): Promise<UserEvent[]> {
  if (change.eventName !== 'MODIFY') return [];
  const strip = (item: Record<string, unknown>) => {
    const { extras_bytes: _e, read_at: _r, ...rest } = toThreadMessage(item, '');
    return rest;
  };
  if (same(strip(change.oldImage!), strip(change.newImage!))) return [];
  const m = toThreadMessage(change.newImage!, '');
  const participants = m.thread.startsWith('grp_')
    ? [...new Set([m.contact_id, ...(await groupMembers(m.account_id, m.thread))])]
    : m.thread.split('+');
  const views = await messageForParticipants(change.newImage!, participants);
  const objects = await presented(
    m.account_id,
    views.map((v) => v.message),
    reads,
  );
  return views.map(({ reader }, i) =>
    userEvent(m.account_id, event(change, m.account_id, 'message.updated', objects[i], reader, reader), reader),
  );
}

/** The events of one committed change in its users' views (none for most items). */
export async function userEventsOf(change: Change, reads: BatchReads = batchReads()): Promise<UserEvent[]> {
  const image = change.newImage ?? change.oldImage;
  if (!image) return [];
  if (change.sk === 'CONV' && image.type === 'conversation') {
    return conversationEvents(change).map((e) => userEvent(e.accountId, e, e.event.user!));
  }
  if (image.type === 'message_entry') return entryEvents(change, reads);
  if (image.type === 'message') return threadMessageEvents(change, reads);
  return [];
}
