import { transactNamed, type NamedItems } from '#shared/db/batch';
import { AGAIN, retryOnConflict } from '#shared/db/retry';
import { getContacts, touchContactUpdate, type Contact } from '#shared/data/contacts';
import {
  clearPinnedMessage,
  findConversation,
  otherInThread,
  threadOf,
  touchConversationUpdate,
  type Conversation,
} from '#shared/data/conversations';
import { getJob } from '#shared/data/jobs';
import { parseItem } from '#shared/db/item-schema';
import { groupMembers } from '#shared/data/group-members';
import { groupExists } from '#shared/data/groups';
import * as messages from '#shared/data/messages';
import { contentGone, contentPut, participantGone, participantParts } from '#shared/data/messages';
import { filesOf, type Message, type NewMessage } from '#shared/data/message-items';
import { writeMessage, type MessageWrite } from '#shared/data/message-writes';
import type { Principal } from '#shared/data/tokens';
import { conflict, forbidden, gone, invalid, notFound, unauthenticated } from '#shared/errors';
import { newJob, jobPut, startJob } from '#shared/jobs/run';
import { deliverTo, RECIPIENT_GONE, retractFrom } from '#shared/messaging/delivery';
import { fanout, INLINE_MS, messageSubject, retraction } from '#shared/messaging/fanout';
import { readThrough } from '#shared/messaging/read-state';
import {
  attachmentsBytes,
  fileIdsOf,
  MAX_ATTACHMENTS,
  planAttachments,
  toAttachments,
  type AttachmentsInput,
} from '#shared/messaging/attachments';
import { attachParts, type FileRecord } from '#shared/data/files';
import { filesToAttach } from '#shared/files/attach';
import { releaseFiles, type Releases } from '#shared/files/release';
import { cursorPage, invalidCursor, type CursorQuery } from '#shared/messaging/cursor';
import {
  MAX_CONTACTS_PER_REACTION,
  MAX_REACTION_NAMES,
  planReactions,
  reactionChanges,
  type ReactionsInput,
} from '#shared/messaging/reactions';
import { MAX_EXTRAS_BYTES } from '#shared/messaging/size';
import type { Hold } from '#shared/data/idempotency';
import { derivedId, newId } from '#shared/util/ids';
import { countMetric } from '#shared/util/metrics';

const tooLarge = (param: string) =>
  invalid(
    `A message's reactions and attachments are limited to ${MAX_EXTRAS_BYTES} bytes (as encoded in a response); this change would pass that`,
    param,
    'message_too_large',
  );

/**
 * Stores the message once in its thread with the sender's entry, and
 * delivers it to every other participant: in the same transaction for a
 * one-to-one conversation; for a group, the members at this moment are
 * recorded in that transaction (the fan-out record) and delivered to in
 * chunks, inline for up to INLINE_MS and then from the delivery queue.
 */
export async function sendMessage(
  who: Principal,
  input: { conversation_id: string; message: string; attachments?: AttachmentsInput },
  idempotency?: Hold,
): Promise<Message> {
  return (await sendMessageBy(who, input, idempotency)).message;
}

/**
 * A contact's `last_active_at` moves with their sends at this resolution:
 * a send within it of the last mark leaves the contact item out of its
 * transaction. That is one item fewer (3 write units with its index copy)
 * in nearly every send of an active user, and their concurrent sends in
 * different conversations no longer meet on one item.
 */
export const ACTIVE_RESOLUTION_SECONDS = 60;

/** The sender's contact is read beside their conversation: it decides the mark, and the response shows it. */
export async function sendMessageBy(
  who: Principal,
  input: { conversation_id: string; message: string; attachments?: AttachmentsInput },
  idempotency?: Hold,
): Promise<{ message: Message; sender: Contact | undefined }> {
  // A retry of a request whose first attempt committed meets its own message (same id) and answers it.
  const sent = idempotency?.resumed && (await messages.findMessage(who, derivedId('msg', idempotency.createdMs, idempotency.generation)));
  if (sent) return { message: sent, sender: undefined };
  const now = Date.now();
  const [view, senders] = await Promise.all([
    findConversation(who, input.conversation_id),
    getContacts(who.accountId, [who.contactId], { liveOnly: true, consistent: true }),
  ]);
  // Deleting a contact revokes its tokens: one still cached, or used while the delete runs, sends nothing.
  if (!senders.has(who.contactId)) throw unauthenticated('The contact this token belongs to was deleted');
  if (!view) throw notFound('conversation', input.conversation_id, 'conversation_id');
  const files = await filesToAttach(who, fileIdsOf(input.attachments));
  const attachments = toAttachments(input.attachments, files);
  const extras = attachmentsBytes(attachments);
  if (extras > MAX_EXTRAS_BYTES) throw tooLarge('attachments');
  const message: NewMessage = {
    id: idempotency ? derivedId('msg', idempotency.createdMs, idempotency.generation) : newId('msg', now),
    account_id: who.accountId,
    thread: threadOf(view),
    contact_id: who.contactId,
    message: input.message,
    attachments,
    created_at: Math.floor(now / 1000),
    extras_bytes: extras,
    // A one-to-one thread's two entries carry the message: its page is one Query (docs/data-model.md).
    ...(view.contact_id !== null ? { copied: true, sender_conversation_id: view.id } : {}),
  };
  const sender = senders.get(who.contactId);
  const lastActive = sender?.last_active_at ?? null;
  const marked = lastActive !== null && lastActive > message.created_at - ACTIVE_RESOLUTION_SECONDS;
  const own: NamedItems = [
    ['message', contentPut(message)],
    ...participantParts(who, view.id, message),
    ['conversation', touchConversationUpdate(who, view.id, message.created_at)],
    ...(marked ? [] : ([['sender', touchContactUpdate(who.accountId, who.contactId, message.created_at)]] as NamedItems)),
    ...attachParts([...files.values()], message.id, message.created_at),
  ];
  const failed =
    view.contact_id !== null
      ? await deliverTo(view.contact_id, { message, target: { contactId: who.contactId }, at: now }, own, true)
      : await sendToGroup(who, view, message, own, now);
  if (failed.includes('conversation')) throw notFound('conversation', input.conversation_id, 'conversation_id');
  if (failed.includes(RECIPIENT_GONE))
    throw gone('The contact of this conversation was deleted: it takes no new messages', 'conversation_id', 'contact_deleted');
  lostFile(failed, input.attachments);
  if (failed.length > 0) throw new Error(`storing a message failed on ${failed.join(', ')}`);
  countMetric('messagesSent');
  const { sender_conversation_id: _, ...stored } = message;
  return {
    message: { ...stored, conversation_id: view.id, reactions: [], read_at: null, updated_at: null },
    sender: sender && (marked ? sender : { ...sender, last_active_at: message.created_at }),
  };
}

/** A file deleted (or its deletion begun) between its check and the write: 404, as if it had been gone at the check. */
function lostFile(failed: string[], input: AttachmentsInput | undefined) {
  const part = failed.find((name) => name.startsWith('file:'));
  if (!part) return;
  const id = part.slice('file:'.length);
  throw notFound('file', id, `attachments[${fileIdsOf(input).indexOf(id)}][file_id]`);
}

/** `now`: the message's creation time, which its writes carry. */
async function sendToGroup(who: Principal, view: Conversation, message: NewMessage, own: NamedItems, now: number): Promise<string[]> {
  const groupId = view.group_id!;
  const members = await groupMembers(who.accountId, groupId);
  // A removed member (or one of a deleted group) keeps its view but meets the thread as one it never had.
  if (!members.includes(who.contactId)) throw notFound('conversation', view.id, 'conversation_id');
  const recipients = members.filter((c) => c !== who.contactId);
  const payload = { messageId: message.id, groupId, sender: who.contactId, createdAt: message.created_at, recipients };
  const job = recipients.length > 0 ? newJob(fanout, who.accountId, payload) : undefined;
  // The group's delete removes its members after it commits: a send meets the group, or fails as to a group it never had.
  const failed = await transactNamed(
    [...own, ['group', groupExists(who.accountId, groupId)], ...(job ? ([['fanout', jobPut(job)]] as NamedItems) : [])],
    undefined,
    now,
  );
  if (failed.includes('group')) throw notFound('conversation', view.id, 'conversation_id');
  if (failed.length === 0 && job) await startJob(fanout, job, Date.now() + INLINE_MS);
  return failed;
}

/** `toChange`: for a change, which a removed group member may not make (see findMessage): 404 as for a message they never had. */
export async function getMessage(who: Principal, id: string, toChange = false): Promise<Message> {
  const message = await messages.findMessage(who, id, toChange);
  if (!message) throw notFound('message', id, 'id');
  return message;
}

export async function listMessages(who: Principal, query: CursorQuery & { conversation_id?: string }) {
  const conversationId = query.conversation_id;
  if (conversationId === undefined) {
    return listAcrossConversations(who, await cursorPage(query, (id) => messages.isUserMessage(who, id)));
  }
  const found = await messages.conversationMessages(who, conversationId, await cursorPage(query));
  if (!found) throw notFound('conversation', conversationId, 'conversation_id');
  if (!found.cursorFound) throw invalidCursor(query);
  return found.page;
}

/**
 * The user-wide list may still index messages of a conversation being
 * purged (or a retraction on its way); those are dropped, and the list reads
 * on so a page stays full.
 */
async function listAcrossConversations(who: Principal, page: Awaited<ReturnType<typeof cursorPage>>) {
  const backwards = page.endingBefore !== undefined;
  const kept: Message[] = [];
  let request = page;
  for (let round = 0; round < 10; round++) {
    const result = await messages.userMessages(who, { ...request, limit: page.limit - kept.length });
    kept.push(...(backwards ? result.items.reverse() : result.items));
    if (kept.length >= page.limit || !result.hasMore || result.read.length === 0) {
      return { items: backwards ? kept.reverse() : kept, hasMore: result.hasMore };
    }
    const edge = backwards ? result.read[0]! : result.read.at(-1)!;
    request = backwards ? { limit: page.limit, endingBefore: edge } : { limit: page.limit, startingAfter: edge };
  }
  return { items: backwards ? kept.reverse() : kept, hasMore: true };
}

export interface MessageUpdate {
  message?: string;
  reactions?: ReactionsInput;
  attachments?: AttachmentsInput;
  read?: boolean;
}

/** Plans the update against the message as read; undefined when it would change nothing. */
function planUpdate(
  current: Message,
  update: MessageUpdate,
  changes: ReturnType<typeof reactionChanges> | undefined,
  files: ReadonlyMap<string, FileRecord>,
) {
  const reactions = changes === undefined ? undefined : planReactions(current.reactions, changes);
  const attachments = update.attachments === undefined ? undefined : planAttachments(current.attachments, update.attachments, files);
  const text = update.message !== undefined && update.message !== current.message ? update.message : undefined;
  const bytesDelta = (reactions?.bytesDelta ?? 0) + (attachments?.bytesDelta ?? 0);
  const at = Date.now();
  if (bytesDelta > 0 && current.extras_bytes + bytesDelta > MAX_EXTRAS_BYTES) {
    throw tooLarge(reactions && reactions.bytesDelta > 0 ? 'reactions' : 'attachments');
  }
  const changed =
    text !== undefined ||
    (reactions !== undefined && (reactions.clearAll || reactions.ops.length > 0)) ||
    (attachments !== undefined && (attachments.clear || attachments.append.length > 0));
  if (!changed) return undefined;
  const write: MessageWrite = {
    text,
    reactions,
    attachments,
    bytesDelta,
    limits: {
      names: MAX_REACTION_NAMES,
      contactsPerName: MAX_CONTACTS_PER_REACTION,
      attachments: MAX_ATTACHMENTS,
      extrasBytes: MAX_EXTRAS_BYTES,
    },
    now: Math.floor(at / 1000),
    at,
  };
  return write;
}

/** A write's conditions fail only at a cap (or when the message went); then re-read and re-check. */
const MAX_ATTEMPTS = 3;

/**
 * Every change is an operation that commutes with concurrent ones, so
 * concurrent reactions, attachments and read marks all land without retries;
 * concurrent text edits: the last one wins. The text and attachments are
 * the sender's alone; any participant reacts and reads (`read` reads every
 * earlier message of the thread too, for this reader only). A member removed
 * from the group since changes nothing: 404 (getMessage's `toChange`).
 */
export async function updateMessage(who: Principal, id: string, update: MessageUpdate): Promise<Message> {
  const changes = update.reactions === undefined ? undefined : reactionChanges(update.reactions);
  const updated = await retryOnConflict(
    async () => {
      const current = await getMessage(who, id, true);
      if (current.contact_id !== who.contactId && (update.message !== undefined || update.attachments !== undefined)) {
        throw senderOnly(update.message !== undefined ? 'message' : 'attachments');
      }
      const files = update.attachments === undefined ? new Map() : await filesToAttach(who, fileIdsOf(update.attachments));
      const write = planUpdate(current, update, changes, files);
      if (!write) return current;
      // Files attached gain the message; files of removed attachments lose it, and a job deletes those left with none.
      const released = write.attachments?.clear ? releaseFiles(who.accountId, filesOf(current.attachments), current.id) : undefined;
      const parts = [...attachParts([...files.values()], current.id, write.now), ...(released?.parts ?? [])];
      const written = await writeMessage(who, current, write, parts);
      if (Array.isArray(written)) {
        lostFile(written, update.attachments);
        return AGAIN;
      }
      if (written === 'failed') return AGAIN;
      await released?.start();
      return written;
    },
    {
      tries: MAX_ATTEMPTS,
      exhausted: () => {
        throw conflict('The message is being changed by other requests at one of its limits; retry', 'concurrent_update');
      },
    },
  );
  if (update.read !== true) return updated;
  const conversation = await findConversation(who, updated.conversation_id);
  if (conversation) await readThrough(who, conversation, updated.id);
  return getMessage(who, id);
}

const senderOnly = (param: string) =>
  forbidden(`Only the sender of a message can change its ${param === 'message' ? 'text' : param} or delete it`, param);

/** The sender's delete removes the message for every participant; their pins of it are cleared. */
export async function deleteMessage(who: Principal, id: string): Promise<void> {
  const message = await getMessage(who, id, true);
  if (message.contact_id !== who.contactId) throw forbidden('Only the sender of a message can delete it', 'id');
  const released: Releases = releaseFiles(who.accountId, filesOf(message.attachments), id);
  const own: NamedItems = [
    ['message', contentGone(message)],
    ...participantGone(who, message.conversation_id, id, 'any'),
    ...released.parts,
  ];
  const other = otherInThread(message.thread, who.contactId);
  if (other !== undefined) {
    if ((await retractFrom(other, who.accountId, id, own)).length > 0) throw notFound('message', id, 'id');
  } else {
    // The fan-out's record lists whom the message reached; none was written for a group of the sender alone.
    const recorded = await getJob({ accountId: who.accountId, subject: messageSubject(id) });
    const job = recorded && newJob(retraction, who.accountId, parseItem(retraction.payload, recorded.payload));
    const failed = await transactNamed([...own, ...(job ? ([['fanout', jobPut(job)]] as NamedItems) : [])]);
    if (failed.length > 0) throw notFound('message', id, 'id');
    if (job) await startJob(retraction, job, Date.now() + INLINE_MS);
  }
  await released.start();
  await clearPinnedMessage(who, message.conversation_id, id);
}
