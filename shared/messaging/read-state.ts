import { transactNamed } from '#shared/db/batch';
import type { Owner } from '#shared/db/keys';
import { advanceReadThrough, unreadLess, type Conversation } from '#shared/data/conversations';
import { markFirstRead, readParts, unreadEntries, type UnreadEntry } from '#shared/data/read-marks';
import { nowSeconds } from '#shared/util/ids';

/**
 * Read state is the reader's: each of their entries carries its own read
 * time, and `unread_count` on their conversation counts their unread
 * entries of others' messages. The two change together, in one
 * transaction per batch of entries, each entry on condition that it is
 * still unread, so the count stays exact under concurrent sends, reads and
 * deletes: a delivery adds an unread entry and one to the count together;
 * a read turns entries read and takes as many off; a retraction removes an
 * entry and, if it was unread, one.
 */

/** Entries read per Query of the range. */
const SCAN = 200;
/** Entries per transaction: up to three items each (the entry, the message's first read, the sender's copy of it) and the count. */
const PER_TRANSACTION = 33;
/** Bounds a read of a very long unread range (SCAN entries a round). */
const MAX_ROUNDS = 500;

/**
 * Reads every message of the conversation up to `through` (a message id,
 * or an id made for "now"), for this reader: the entries between their
 * last read position and `through` are turned read, then the position moves
 * to `through`, so a delivery of an older message that arrives later
 * arrives read. Entries delivered while the first pass ran are read by a
 * second pass, after the position moved.
 */
export async function readThrough(
  owner: Owner,
  conversation: Conversation,
  through: string,
  at = nowSeconds(),
  { tellSenders = true }: { tellSenders?: boolean } = {},
): Promise<void> {
  const from = conversation.read_through;
  if (from !== null && from >= through) return;
  const range = { at, tellSenders };
  await readRange(owner, conversation.id, from, through, range);
  if (!(await advanceReadThrough(owner, conversation.id, through))) return;
  await readRange(owner, conversation.id, from, through, range);
}

/** When the entries are read, and whether their senders learn of it (not from a member removed from the group). */
interface ReadAs {
  at: number;
  tellSenders: boolean;
}

async function readRange(owner: Owner, conversationId: string, from: string | null, through: string, as: ReadAs): Promise<void> {
  let after = from;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const { unread, last } = await unreadEntries(owner, conversationId, after, through, SCAN);
    for (let i = 0; i < unread.length; i += PER_TRANSACTION) {
      if (!(await readBatch(owner, conversationId, unread.slice(i, i + PER_TRANSACTION), as))) return;
    }
    if (last === undefined) return;
    after = last;
  }
}

/** False when the conversation is gone. */
async function readBatch(owner: Owner, conversationId: string, batch: UnreadEntry[], { at, tellSenders }: ReadAs): Promise<boolean> {
  let pending = batch;
  /** Entries whose sender's copy is gone (the sender deleted their conversation): read without it. */
  const senderGone = new Set<string>();
  // Each failed attempt settles at least one entry or drops one sender's copy, so this ends within twice the batch's size.
  for (let attempt = 0; attempt <= 2 * batch.length && pending.length > 0; attempt++) {
    const failed = await transactNamed([
      ...pending.flatMap((entry) =>
        readParts(owner, conversationId, entry, at, { toSender: !senderGone.has(entry.id), heard: tellSenders }),
      ),
      ['view', unreadLess(owner, conversationId, pending.length)],
    ]);
    if (failed.length === 0) {
      if (tellSenders) await markFirstRead(owner.accountId, pending, at);
      return true;
    }
    if (failed.includes('view')) return false;
    for (const name of failed.filter((n) => n.startsWith('sender:'))) senderGone.add(name.slice('sender:'.length));
    // Read by a concurrent request, or retracted by its sender (the retraction counts it): leave those out.
    const settled = new Set(failed.filter((n) => !n.startsWith('sender:')).map((name) => name.slice(name.indexOf(':') + 1)));
    pending = pending.filter((entry) => !settled.has(entry.id));
  }
  return true;
}
