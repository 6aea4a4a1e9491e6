import { transactNamed, txUpdate, type NamedItems } from '#shared/db/batch';
import { attr, update, type Update } from '#shared/db/expression';
import { getItem, unlessConditionFails, updateItem } from '#shared/db/items';
import type { Owner } from '#shared/db/keys';
import { asReadBy, contentKeyOf, entryKey, filesOf, type Attachment, type Message } from '#shared/data/message-items';
import { otherInThread } from '#shared/data/conversations';

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
  reactions?: { clearAll: boolean; ops: ReactionOp[]; namesAdded: number };
  attachments?: { clear: boolean; append: Attachment[] };
  bytesDelta: number;
  /** Bounds the write's conditions enforce against the item as stored, whatever ran concurrently. */
  limits: { names: number; contactsPerName: number; attachments: number; extrasBytes: number };
  /** updated_at, seconds; `at` the same instant in ms, which the write carries (its event's time). */
  now: number;
  at: number;
}

/**
 * One UpdateItem made of operations that commute with any other request's:
 * per-name list appends and removals, a list append for attachments,
 * `if_not_exists` for read_at, ADD for the size total. The text and
 * updated_at are plain SETs (last writer wins). The conditions keep the
 * caps whatever ran concurrently; they only fail at a cap (or when the
 * message is gone). Answers the updated message, or 'failed' then.
 * With `also` (other items the change must move with, such as the files
 * its attachments name), or copies of the message on a one-to-one
 * thread's two entries, it is one transaction, and a part of `also` that
 * failed is answered by name.
 */
export async function writeMessage(
  owner: Owner,
  current: Message,
  w: MessageWrite,
  also: NamedItems = [],
): Promise<Message | 'failed' | string[]> {
  const write = changes(w, true);
  const parts = [...(current.copied ? copyParts(owner, current, changes(w, false)) : []), ...also];
  if (parts.length === 0) {
    const out = await unlessConditionFails(updateItem(contentKeyOf(current), write, 'ALL_NEW', w.at));
    return out ? asReadBy(owner.contactId, out, current) : 'failed';
  }
  const message: NamedItems[number] = ['message', txUpdate(contentKeyOf(current), write)];
  let failed = await transactNamed([message, ...parts], undefined, w.at);
  // The other participant's entry went with their conversation (its locator may outlive it a moment): change the rest.
  if (failed.length === 1 && failed[0] === 'copy:peer') {
    failed = await transactNamed([message, ...parts.filter(([name]) => name !== 'copy:peer')], undefined, w.at);
  }
  if (failed.includes('message') || failed.includes('copy:own')) return 'failed';
  if (failed.length > 0) return failed;
  const out = await getItem(contentKeyOf(current), true);
  return out ? asReadBy(owner.contactId, out, current) : 'failed';
}

/**
 * The same change to both entries of a one-to-one message that carry it,
 * in the message's transaction: the copies move with the message or not at
 * all. The other participant's entry is where their locator says, read
 * with the message for the change (`peerConversationId`, findMessage);
 * without one (their conversation deleted) only the writer's own changes.
 */
function copyParts(owner: Owner, current: Message, copy: Update): NamedItems {
  const own: NamedItems[number] = ['copy:own', txUpdate(entryKey(owner, current.conversation_id, current.id), copy)];
  const peer = otherInThread(current.thread, owner.contactId);
  if (!peer || !current.peerConversationId) return [own];
  const peerEntry = entryKey({ accountId: owner.accountId, contactId: peer }, current.peerConversationId, current.id);
  return [own, ['copy:peer', txUpdate(peerEntry, copy)]];
}

/**
 * The change as operations that commute with any other request's. `caps`:
 * with the conditions that keep the limits (the thread's message, whose
 * counts decide; a copy changes with it in one transaction, so it only
 * needs to exist).
 */
function changes(w: MessageWrite, caps: boolean) {
  const write = update().set`updated_at = ${w.now}`.when`attribute_exists(pk)`;
  if (w.text !== undefined) write.set`${attr('message')} = ${w.text}`;
  if (w.reactions) {
    if (w.reactions.clearAll) write.set`reactions = ${{}}`;
    // Names first added by this request follow each other in request order.
    const seq = w.at * 100;
    w.reactions.ops.forEach((op, i) => {
      const name = attr(op.name);
      if (op.kind === 'remove') write.remove`reactions.${name}`;
      else if (op.kind === 'replace') write.set`reactions.${name} = ${[seq + i, ...op.contacts]}`;
      else {
        write.set`reactions.${name} = list_append(if_not_exists(reactions.${name}, ${[seq + i]}), ${op.contacts})`;
        // The list holds the seq too: at most `contactsPerName` contacts after the append.
        if (caps)
          write.when`(attribute_not_exists(reactions.${name}) OR size(reactions.${name}) <= ${w.limits.contactsPerName + 1 - op.contacts.length})`;
      }
    });
    if (caps && w.reactions.namesAdded > 0) write.when`size(reactions) <= ${w.limits.names - w.reactions.namesAdded}`;
  }
  if (w.attachments?.clear) write.set`attachments = ${[]}`.remove`file_ids`;
  else if (w.attachments && w.attachments.append.length > 0) {
    write.set`attachments = list_append(attachments, ${w.attachments.append})`;
    const files = filesOf(w.attachments.append);
    if (caps && files.length > 0) write.add`file_ids ${new Set(files)}`;
    if (caps) write.when`size(attachments) <= ${w.limits.attachments - w.attachments.append.length}`;
  }
  if (w.bytesDelta !== 0) {
    write.add`extras_bytes ${w.bytesDelta}`;
    if (caps && w.bytesDelta > 0) write.when`extras_bytes <= ${w.limits.extrasBytes - w.bytesDelta}`;
  }
  return write;
}
