import { conversationIdFor, otherInThread, toConversation } from '#shared/data/conversations';
import { listStatus, toEmailList, type ListStatus } from '#shared/data/email-lists';
import { toThreadMessage } from '#shared/data/message-items';
import type { Item } from '#shared/db/items';
import { presentEmailList } from '#shared/email/present';
import { presentConversation, presentMessages } from '#shared/messaging/present';
import type { Change } from '#shared/stream/change';
import { event, same, type AccountEvent, type EventType } from '#shared/stream/event';

/**
 * The change stream in the account's view: the events a committed change
 * means to the account's backend (webhooks). Each user's view is in
 * users.ts; the stream's consumers (shared/webhooks, shared/realtime) take
 * their events from here and import nothing from one another.
 */

const verb = { INSERT: 'created', MODIFY: 'updated', REMOVE: 'deleted' } as const;

/** A conversation's change, in its owner's view: the account and the owner see the same object. */
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
 * from the start, and that is no transition; nor is the end of an import
 * that failed having added nothing (before its first row): its release
 * names it in `failed_import`, and a round that added emails carries
 * `work_started_at` until after it completes (endListRound).
 */
function listEvents(change: Change): AccountEvent[] {
  if (change.eventName !== 'MODIFY') return [];
  const before = toEmailList(change.oldImage!);
  const after = toEmailList(change.newImage!);
  const status = listStatus(after);
  const type = LIST_EVENTS[status];
  if (!type || listStatus(before) === status) return [];
  const failedImportEnded = change.newImage!.failed_import !== change.oldImage!.failed_import;
  if (status === 'completed' && failedImportEnded && change.newImage!.work_started_at === undefined) return [];
  return [event(change, after.account_id, type, presentEmailList(after))];
}

/**
 * The events of one change in the account's view (webhooks): none for most
 * items. A conversation is its owner's; a thread's message is presented as
 * its sender's view; an email list's event is its status' transition.
 */
export async function accountEventsOf(change: Change): Promise<AccountEvent[]> {
  const image = change.newImage ?? change.oldImage;
  if (!image) return [];
  if (change.sk === 'CONV' && image.type === 'conversation') return conversationEvents(change);
  if (change.sk === 'LIST' && image.type === 'email_list') return listEvents(change);
  if (change.sk.startsWith('MSG#') && image.type === 'message') return messageEvents(change);
  return [];
}
