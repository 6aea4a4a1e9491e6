import { AGAIN, retryOnConflict } from '#shared/db/retry';
import { clearPinnedMessage, existingConversationIds } from '#shared/data/conversations';
import * as messages from '#shared/data/messages';
import type { Message, MessageWrite } from '#shared/data/messages';
import type { Principal } from '#shared/data/tokens';
import { conflict, invalid, notFound } from '#shared/errors';
import { attachmentsBytes, MAX_ATTACHMENTS, planAttachments, toAttachments, type AttachmentsInput } from '#shared/messaging/attachments';
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
import { derivedId, newId, nowSeconds } from '#shared/util/ids';
import { countMetric } from '#shared/util/metrics';

const tooLarge = (param: string) =>
  invalid(
    `A message's reactions and attachments are limited to ${MAX_EXTRAS_BYTES} bytes (as encoded in a response); this change would pass that`,
    param,
    'message_too_large',
  );

export async function sendMessage(
  who: Principal,
  input: { conversation_id: string; message: string; attachments?: AttachmentsInput },
  idempotency?: Hold,
): Promise<Message> {
  // A retry of a request whose first attempt committed meets its own message (same id) and answers it.
  const sent = idempotency?.resumed && (await messages.findMessage(who, derivedId('msg', idempotency.createdMs, idempotency.generation)));
  if (sent) return sent;
  const now = Date.now();
  const attachments = toAttachments(input.attachments);
  const message: Message = {
    id: idempotency ? derivedId('msg', idempotency.createdMs, idempotency.generation) : newId('msg', now),
    account_id: who.accountId,
    conversation_id: input.conversation_id,
    contact_id: who.contactId,
    message: input.message,
    reactions: [],
    attachments,
    read_at: null,
    created_at: Math.floor(now / 1000),
    updated_at: null,
    extras_bytes: attachmentsBytes(attachments),
  };
  if (message.extras_bytes > MAX_EXTRAS_BYTES) throw tooLarge('attachments');
  if (!(await messages.insertMessage(who, message))) throw notFound('conversation', input.conversation_id, 'conversation_id');
  countMetric('messagesSent');
  return message;
}

export async function getMessage(who: Principal, id: string): Promise<Message> {
  const message = await messages.findMessage(who, id);
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
 * purged; drop those and read on so a page stays full.
 */
async function listAcrossConversations(who: Principal, page: Awaited<ReturnType<typeof cursorPage>>) {
  const backwards = page.endingBefore !== undefined;
  const kept: Message[] = [];
  let request = page;
  for (let round = 0; round < 10; round++) {
    const result = await messages.userMessages(who, { ...request, limit: page.limit - kept.length });
    const live = await existingConversationIds(who, [...new Set(result.items.map((m) => m.conversation_id))]);
    const visible = result.items.filter((m) => live.has(m.conversation_id));
    kept.push(...(backwards ? visible.reverse() : visible));
    if (kept.length >= page.limit || !result.hasMore || result.items.length === 0) {
      return { items: backwards ? kept.reverse() : kept, hasMore: result.hasMore };
    }
    const edge = backwards ? result.items[0]! : result.items.at(-1)!;
    request = backwards ? { limit: page.limit, endingBefore: edge.id } : { limit: page.limit, startingAfter: edge.id };
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
function planUpdate(current: Message, update: MessageUpdate, changes: ReturnType<typeof reactionChanges> | undefined) {
  const reactions = changes === undefined ? undefined : planReactions(current.reactions, changes);
  const attachments = update.attachments === undefined ? undefined : planAttachments(current.attachments, update.attachments);
  const text = update.message !== undefined && update.message !== current.message ? update.message : undefined;
  const markRead = update.read === true && current.read_at === null;
  const bytesDelta = (reactions?.bytesDelta ?? 0) + (attachments?.bytesDelta ?? 0);
  if (bytesDelta > 0 && current.extras_bytes + bytesDelta > MAX_EXTRAS_BYTES) {
    throw tooLarge(reactions && reactions.bytesDelta > 0 ? 'reactions' : 'attachments');
  }
  const changed =
    text !== undefined ||
    markRead ||
    (reactions !== undefined && (reactions.clearAll || reactions.ops.length > 0)) ||
    (attachments !== undefined && (attachments.clear || attachments.append.length > 0));
  if (!changed) return undefined;
  const write: MessageWrite = {
    text,
    markRead,
    reactions,
    attachments,
    bytesDelta,
    limits: {
      names: MAX_REACTION_NAMES,
      contactsPerName: MAX_CONTACTS_PER_REACTION,
      attachments: MAX_ATTACHMENTS,
      extrasBytes: MAX_EXTRAS_BYTES,
    },
    now: nowSeconds(),
  };
  return write;
}

/** A write's conditions fail only at a cap (or when the message went); then re-read and re-check. */
const MAX_ATTEMPTS = 3;

/**
 * Every change is an operation that commutes with concurrent ones, so
 * concurrent reactions, attachments and read marks all land without retries;
 * concurrent text edits: the last one wins.
 */
export async function updateMessage(who: Principal, id: string, update: MessageUpdate): Promise<Message> {
  const changes = update.reactions === undefined ? undefined : reactionChanges(update.reactions);
  return retryOnConflict(
    async () => {
      const current = await getMessage(who, id);
      const write = planUpdate(current, update, changes);
      if (!write) return current;
      const written = await messages.writeMessage(who, current, write);
      return written === 'failed' ? AGAIN : written;
    },
    {
      tries: MAX_ATTEMPTS,
      exhausted: () => {
        throw conflict('The message is being changed by other requests at one of its limits; retry', 'concurrent_update');
      },
    },
  );
}

export async function deleteMessage(who: Principal, id: string): Promise<void> {
  const message = await getMessage(who, id);
  if (!(await messages.removeMessage(who, message.conversation_id, id))) throw notFound('message', id, 'id');
  await clearPinnedMessage(who, message.conversation_id, id);
}
