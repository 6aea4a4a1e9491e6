import { config } from '#shared/config';
import { transactNamed, type NamedItems } from '#shared/db/batch';
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
import { advanceFanout, finishFanout, getFanout, unfinishedFanouts } from '#shared/data/fanouts';
import { contentExists, entryOf, participantGone, participantParts, type NewMessage } from '#shared/data/messages';
import { nowSeconds } from '#shared/util/ids';
import { describeError, logger } from '#shared/util/logger';
import { inParallel } from '#shared/util/parallel';
import { requireQueue, sendJson } from '#shared/util/sqs';

/**
 * Delivery puts a message into every other participant's own conversation:
 * their entry (read state) and locator, one more unread, and activity now;
 * the conversation is opened for them on first delivery. Each recipient's
 * part is conditional (the entry must be new), so a delivery repeated by a
 * retry or a redelivered queue message changes nothing the second time.
 */

/** Recipients per transaction: each takes up to 4 items (guard, conversation, entry, locator), plus the message check: 97 of 100. */
export const CHUNK = 24;
/** How long a send delivers to a group inline before the delivery queue takes the rest. */
export const INLINE_MS = 2_500;
/** Attempts for one recipient whose conversation changed under the delivery (deleted, opened, read past the message). */
const ATTEMPTS = 4;
/** Recipients handled one by one at a time, when a chunk's transaction could not be used. */
const PARALLEL = 4;

export interface Delivery {
  message: NewMessage;
  /** What a recipient's conversation is with: the sender (one-to-one) or the group. */
  target: ConversationTarget;
  /** Epoch ms the delivery's writes carry, when it is part of the send: the message's own creation time. */
  at?: number;
}

/** One recipient's parts, into their conversation (or a new one); `readAt` when they have read past the message. */
function recipientParts(recipient: Owner, conversationId: string | undefined, d: Delivery, readAt?: number): NamedItems {
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
  ];
}

/**
 * Delivers to one recipient, in one transaction with `also` (the send's own
 * items, for a one-to-one thread). Answers the names of `also`'s items whose
 * condition failed (empty: done, or delivered before), or 'gone' when the
 * message no longer exists.
 */
export async function deliverTo(contactId: string, d: Delivery, also: NamedItems = []): Promise<string[]> {
  const recipient = { accountId: d.message.account_id, contactId };
  let readAt: number | undefined;
  let conversationId = await conversationIdFor(recipient, targetIdOf(d.target));
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const failed = await transactNamed([...also, ...recipientParts(recipient, conversationId, d, readAt)], undefined, d.at);
    if (failed.length === 0 || failed.includes(`entry:${contactId}`) || failed.includes(`locator:${contactId}`)) return [];
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
async function deliverChunk(d: Delivery, recipients: string[]): Promise<boolean> {
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

/**
 * Works through a group message's fan-out record until done or past the
 * deadline (epoch ms): 'more' when recipients remain. Progress is recorded
 * after each chunk, and each chunk is idempotent, so a run that dies is
 * resumed by the next (queue redelivery, or the sweeper) without doubling.
 */
export async function runFanout(accountId: string, messageId: string, deadline: number): Promise<'done' | 'more'> {
  const f = await getFanout(accountId, messageId);
  if (!f) return 'done';
  const delivery: Delivery = {
    message: {
      id: messageId,
      account_id: accountId,
      thread: f.groupId,
      contact_id: f.sender,
      created_at: f.createdAt,
      message: '',
      attachments: [],
      extras_bytes: 0,
    },
    target: { groupId: f.groupId },
  };
  for (let i = f.next; i < f.recipients.length; i += CHUNK) {
    const chunk = f.recipients.slice(i, i + CHUNK);
    if (f.op === 'deliver') {
      // The message was deleted: its retraction takes the record over (or, if none was recorded, nothing is left to do).
      if (!(await deliverChunk(delivery, chunk))) {
        await finishFanout(f);
        return 'done';
      }
    } else {
      await inParallel(chunk, PARALLEL, async (r) => void (await retractFrom(r, accountId, messageId)));
    }
    if (!(await advanceFanout(f, i + CHUNK))) return 'done';
    if (Date.now() > deadline && i + CHUNK < f.recipients.length) return 'more';
  }
  await finishFanout(f);
  return 'done';
}

export type FanoutJob = { kind: 'fanout'; accountId: string; messageId: string };

export async function enqueueFanout(job: FanoutJob): Promise<void> {
  await sendJson(requireQueue(config().deliveryQueueUrl, 'DELIVERY_QUEUE_URL'), job);
}

/** Runs a fan-out inline until the deadline, then hands the rest to the delivery worker (or, failing that, the sweeper). */
export async function startFanout(accountId: string, messageId: string, deadline: number): Promise<void> {
  const job: FanoutJob = { kind: 'fanout', accountId, messageId };
  // The send (or delete) is committed with its record: whatever stops the inline run, the queue finishes it.
  const inline = await runFanout(accountId, messageId, deadline).catch((error) => {
    logger.warn('inline delivery stopped', { job, ...describeError(error) });
    return 'more' as const;
  });
  if (inline !== 'more') return;
  logger.info('delivery continues asynchronously', { job });
  await enqueueFanout(job).catch((error) => logger.warn('delivery queueing deferred to the sweeper', { job, ...describeError(error) }));
}

export function parseFanoutJob(body: string): FanoutJob | undefined {
  try {
    const job = JSON.parse(body) as FanoutJob;
    return job.kind === 'fanout' && typeof job.accountId === 'string' && typeof job.messageId === 'string' ? job : undefined;
  } catch {
    return undefined;
  }
}

/** Fan-outs pending longer than this lost their run (a crash, a failed queue send): the sweeper queues them again. */
export const UNFINISHED_AFTER_MS = 2 * 60_000;

/** The sweeper's pass over fan-outs still pending. */
export async function requeueUnfinishedFanouts(): Promise<number> {
  const pending = await unfinishedFanouts(Date.now() - UNFINISHED_AFTER_MS);
  for (const f of pending) await enqueueFanout({ kind: 'fanout', ...f });
  return pending.length;
}
