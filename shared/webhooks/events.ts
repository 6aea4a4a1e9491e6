import { conversationIdFor, otherInThread, toConversation } from '#shared/data/conversations';
import { listStatus, toEmailList, type ListStatus } from '#shared/data/email-lists';
import { toThreadMessage } from '#shared/data/messages';
import type { Item } from '#shared/db/items';
import { presentEmailList } from '#shared/email/present';
import { presentConversation, presentMessages } from '#shared/messaging/present';
import { streams } from '#shared/routes';
import { derivedId } from '#shared/util/ids';
import type { EventType, WebhookEvent } from '#shared/webhooks/event-types';

/** One committed change of one item, as the table's change stream reports it. */
export interface Change {
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  /** The stream's sequence number: unique per change of the table, the same when a batch is delivered again. */
  sequenceNumber: string;
  /** When the change was committed (the stream's approximate creation time), ms. */
  createdMs: number;
  pk: string;
  sk: string;
  newImage?: Item;
  oldImage?: Item;
}

export interface AccountEvent {
  accountId: string;
  event: WebhookEvent;
}

/**
 * The items whose changes are events: a conversation (one per participant:
 * `user` is its owner), a thread's message (stored once: presented as its
 * sender's view, `user` the sender) and an email list: the sort keys of the
 * stream consumer's filter (shared/routes.ts, `streams`).
 */
const EVENT_SORT_KEYS = streams.find((s) => s.name === 'webhook-events')!.sortKeys;

export const isEventItem = (sk: string) => EVENT_SORT_KEYS.exact.includes(sk) || EVENT_SORT_KEYS.prefix.some((p) => sk.startsWith(p));

/**
 * An event's id comes from the change itself (its item and stream sequence
 * number) and the type, so a redelivered stream batch yields the very same
 * id, and the receiver sees one `webhook-id` however often it arrives.
 */
export const eventId = (change: Change, type: string, view = '') =>
  derivedId('evt', change.createdMs, `${change.pk}\n${change.sk}\n${change.sequenceNumber}\n${type}${view && `\n${view}`}`);

export const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * One event of a change. Several views of one change (the realtime
 * fan-out's, one per participant) each get their own id: `view` names it.
 */
export function event(change: Change, accountId: string, type: EventType, object: unknown, user?: string, view?: string): AccountEvent {
  return {
    accountId,
    event: {
      id: eventId(change, type, view),
      type,
      created_at: Math.floor(change.createdMs / 1000),
      ...(user === undefined ? {} : { user }),
      data: { object },
    },
  };
}

const verb = { INSERT: 'created', MODIFY: 'updated', REMOVE: 'deleted' } as const;

export function conversationEvents(change: Change): AccountEvent[] {
  const before = change.oldImage && presentConversation(toConversation(change.oldImage));
  const after = change.newImage && presentConversation(toConversation(change.newImage));
  // Internal bookkeeping (read_through, index keys) changes nothing a reader sees: no event.
  if (change.eventName === 'MODIFY' && same(before, after)) return [];
  const stored = toConversation((change.newImage ?? change.oldImage)!);
  return [event(change, stored.account_id, `conversation.${verb[change.eventName]}`, after ?? before, stored.owner_contact_id)];
}

async function messageEvents(change: Change): Promise<AccountEvent[]> {
  const image = (change.newImage ?? change.oldImage)!;
  const sender = String(image.contact_id);
  const accountId = String(image.account_id);
  const thread = String(image.thread);
  // The sender's own conversation: the one with the group, or with the other contact of the thread.
  const target = thread.startsWith('grp_') ? thread : otherInThread(thread, sender);
  const conversationId = (target && (await conversationIdFor({ accountId, contactId: sender }, target))) ?? null;
  const present = async (item: Item | undefined) =>
    item && {
      ...(await presentMessages(accountId, [toThreadMessage(item, conversationId ?? '')], { fresh: true }))[0]!,
      conversation_id: conversationId,
    };
  if (change.eventName === 'MODIFY') {
    const [before, after] = [toThreadMessage(change.oldImage!, ''), toThreadMessage(change.newImage!, '')];
    const { extras_bytes: _a, ...b } = before;
    const { extras_bytes: _b, ...a } = after;
    if (same(b, a)) return [];
  }
  return [event(change, accountId, `message.${verb[change.eventName]}`, await present(image), sender)];
}

const LIST_EVENTS: Partial<Record<ListStatus, EventType>> = {
  completed: 'email_list.completed',
  insufficient_credits: 'email_list.insufficient_credits',
  error: 'email_list.error',
};

/**
 * A list's event is its status' transition into completed, insufficient
 * credits or error, once: the change that moved the derived status
 * (shared/data/email-lists.ts, listStatus). A new empty list is completed
 * from the start, and that is no transition.
 */
function listEvents(change: Change): AccountEvent[] {
  if (change.eventName !== 'MODIFY') return [];
  const before = toEmailList(change.oldImage!);
  const after = toEmailList(change.newImage!);
  const status = listStatus(after);
  const type = LIST_EVENTS[status];
  if (!type || listStatus(before) === status) return [];
  return [event(change, after.account_id, type, presentEmailList(after))];
}

/** The events of one change (none for most items). */
export async function eventsOf(change: Change): Promise<AccountEvent[]> {
  const image = change.newImage ?? change.oldImage;
  if (!image || !isEventItem(change.sk)) return [];
  if (change.sk === 'CONV' && image.type === 'conversation') return conversationEvents(change);
  if (change.sk === 'LIST' && image.type === 'email_list') return listEvents(change);
  if (change.sk.startsWith('MSG#') && image.type === 'message') return messageEvents(change);
  return [];
}
