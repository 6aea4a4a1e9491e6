import { transactNamed, type NamedItems } from '#shared/db/batch';
import { contactIsLive } from '#shared/data/contacts';
import type { Owner } from '#shared/db/keys';
import {
  clearPinnedMessage,
  conversationIdFor,
  conversationIdsFor,
  deliveredInto,
  findConversation,
  openedByDelivery,
  targetIdOf,
  unreadLess,
  type ConversationTarget,
} from '#shared/data/conversations';
import type { NewMessage } from '#shared/data/message-items';
import { contentExists, entryOf, participantGone, participantParts } from '#shared/data/messages';
import { nowSeconds } from '#shared/util/ids';
import { inParallel } from '#shared/util/parallel';

/**
 * Delivery puts a message into every other participant's own conversation:
 * their entry (read state) and locator, one more unread, and activity now;
 * the conversation is opened for them on first delivery. Each recipient's
 * part is conditional (the entry must be new), so a delivery repeated by a
 * retry or a redelivered queue message changes nothing the second time.
 */

/** Recipients per transaction: each takes up to 4 items (guard, conversation, entry, locator), plus the message check: 97 of 100. */
export const CHUNK = 24;
/** Attempts for one recipient whose conversation changed under the delivery (deleted, opened, read past the message). */
const ATTEMPTS = 4;
/** Recipients handled one by one at a time, when a chunk's transaction could not be used. */
export const PARALLEL = 4;

export interface Delivery {
  message: NewMessage;
  /** What a recipient's conversation is with: the sender (one-to-one) or the group. */
  target: ConversationTarget;
  /** Epoch ms the delivery's writes carry, when it is part of the send: the message's own creation time. */
  at?: number;
}

/** What `deliverTo` answers when the recipient had to be live (a one-to-one send) and their contact is deleted. */
export const RECIPIENT_GONE = 'recipient-gone';

/**
 * One recipient's parts, into their conversation (or a new one); `readAt` when they have read past the message.
 * `mustBeLive`: a conversation is opened for them only while their contact is not deleted (a deleted contact's views
 * are purged, and a send must not open new ones behind the purge).
 */
function recipientParts(
  recipient: Owner,
  conversationId: string | undefined,
  d: Delivery,
  readAt?: number,
  mustBeLive = false,
): NamedItems {
  const m = d.message;
  if (conversationId) {
    return [
      [`view:${recipient.contactId}`, deliveredInto(recipient, conversationId, m.id, m.created_at, readAt === undefined)],
      ...participantParts(recipient, conversationId, m, readAt),
    ];
  }
  const opened = openedByDelivery(recipient, d.target, m.created_at, readAt === undefined, d.at);
  return [
    [`guard:${recipient.contactId}`, opened.guard],
    [`view:${recipient.contactId}`, opened.conversation],
    ...participantParts(recipient, opened.id, m, readAt),
    ...(mustBeLive ? ([[`live:${recipient.contactId}`, contactIsLive(recipient.accountId, recipient.contactId)]] as NamedItems) : []),
  ];
}

/**
 * Delivers to one recipient, in one transaction with `also` (the send's own
 * items, for a one-to-one thread). Answers the names of `also`'s items whose
 * condition failed (empty: done, or delivered before), or 'gone' when the
 * message no longer exists; with `mustBeLive`, [RECIPIENT_GONE] when the
 * recipient has no conversation to deliver into and their contact is deleted.
 */
export async function deliverTo(contactId: string, d: Delivery, also: NamedItems = [], mustBeLive = false): Promise<string[]> {
  const recipient = { accountId: d.message.account_id, contactId };
  let readAt: number | undefined;
  let conversationId = await conversationIdFor(recipient, targetIdOf(d.target));
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const failed = await transactNamed([...also, ...recipientParts(recipient, conversationId, d, readAt, mustBeLive)], undefined, d.at);
    if (failed.length === 0 || failed.includes(`entry:${contactId}`) || failed.includes(`locator:${contactId}`)) return [];
    if (failed.includes(`live:${contactId}`)) return [RECIPIENT_GONE];
    const ours = failed.filter((name) => also.some(([n]) => n === name));
    if (ours.length > 0) return ours;
    // Their conversation was deleted or opened meanwhile, or they read past the message: look again.
    const current = conversationId ? await findConversation(recipient, conversationId) : undefined;
    if (current) readAt = current.read_through !== null && current.read_through >= d.message.id ? nowSeconds() : undefined;
    else conversationId = await conversationIdFor(recipient, targetIdOf(d.target));
  }
  throw new Error(`delivering ${d.message.id} to ${contactId} kept meeting changes`);
}

/** A chunk of a group's recipients in one transaction; one by one if that cannot commit. False when the message is gone. */
export async function deliverChunk(d: Delivery, recipients: string[]): Promise<boolean> {
  const accountId = d.message.account_id;
  const conversations = await conversationIdsFor(accountId, recipients, targetIdOf(d.target));
  const check: NamedItems = [['message', contentExists(d.message)]];
  const failed = await transactNamed([
    ...check,
    ...recipients.flatMap((r) => recipientParts({ accountId, contactId: r }, conversations.get(r), d)),
  ]);
  if (failed.includes('message')) return false;
  if (failed.length === 0) return true;
  let gone = false;
  await inParallel(recipients, PARALLEL, async (r) => {
    if (!gone && (await deliverTo(r, d, check)).length > 0) gone = true;
  });
  return !gone;
}

/** Removes the message from one participant: their entry and locator, and one unread if they had not read it; their pin too. */
export async function retractFrom(contactId: string, accountId: string, messageId: string, also: NamedItems = []): Promise<string[]> {
  const owner = { accountId, contactId };
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const entry = await entryOf(owner, messageId);
    if (!entry && also.length === 0) return [];
    const parts: NamedItems = entry
      ? [
          ...participantGone(owner, entry.conversationId, messageId, entry.read),
          ...(entry.read === false ? ([['view', unreadLess(owner, entry.conversationId, 1)]] as NamedItems) : []),
        ]
      : [];
    const failed = await transactNamed([...also, ...parts]);
    const ours = failed.filter((name) => also.some(([n]) => n === name));
    if (ours.length > 0) return ours;
    if (failed.length === 0) {
      if (entry) await clearPinnedMessage(owner, entry.conversationId, messageId);
      return [];
    }
    // Read meanwhile (the condition held the state planned with), or their conversation is being deleted: plan again.
    if (failed.includes('view') && entry) {
      const failedAgain = await transactNamed([...also, ...participantGone(owner, entry.conversationId, messageId, 'any')]);
      if (failedAgain.length === 0) return [];
    }
  }
  throw new Error(`retracting ${messageId} from ${contactId} kept meeting changes`);
}
