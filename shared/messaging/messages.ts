import { batchGet } from '#shared/db/batch';
import { keys } from '#shared/db/keys';
import { clearPinnedMessage, getConversation } from '#shared/data/conversations';
import * as messages from '#shared/data/messages';
import type { Message } from '#shared/data/messages';
import type { Principal } from '#shared/data/tokens';
import { badRequest, conflict, notFound } from '#shared/http/errors';
import { mergeAttachments, toAttachments, type AttachmentsInput } from '#shared/messaging/attachments';
import { cursorPage, type CursorQuery } from '#shared/messaging/cursor';
import { applyReactions, reactionChanges, type ReactionsInput } from '#shared/messaging/reactions';
import { newId, nowSeconds } from '#shared/util/ids';
import { countMetric } from '#shared/util/metrics';

export async function sendMessage(
  who: Principal,
  input: { conversation_id: string; message: string; attachments?: AttachmentsInput },
): Promise<Message> {
  const now = Date.now();
  const message: Message = {
    id: newId('msg', now),
    account_id: who.accountId,
    conversation_id: input.conversation_id,
    contact_id: who.contactId,
    message: input.message,
    reactions: [],
    attachments: toAttachments(input.attachments),
    read_at: null,
    created_at: Math.floor(now / 1000),
    updated_at: null,
    version: 0,
  };
  if (!(await messages.insertMessage(message))) throw notFound('conversation', input.conversation_id, 'conversation_id');
  countMetric('messagesSent');
  return message;
}

/** A message whose conversation was deleted is already gone for readers, even before the purge reaches it. */
async function visibleMessage(who: Principal, id: string): Promise<Message | undefined> {
  const message = await messages.getMessage(who.accountId, id);
  if (!message || !(await getConversation(who.accountId, message.conversation_id))) return undefined;
  return message;
}

export async function getMessage(who: Principal, id: string): Promise<Message> {
  const message = await visibleMessage(who, id);
  if (!message) throw notFound('message', id, 'id');
  return message;
}

export async function listMessages(who: Principal, query: CursorQuery & { conversation_id?: string }) {
  const conversationId = query.conversation_id;
  if (conversationId !== undefined && !(await getConversation(who.accountId, conversationId))) {
    throw notFound('conversation', conversationId, 'conversation_id');
  }
  const page = await cursorPage(query, async (id) => {
    const message = await messages.getMessage(who.accountId, id);
    return !!message && (conversationId === undefined || message.conversation_id === conversationId);
  });
  if (conversationId !== undefined) return messages.listMessages(who.accountId, conversationId, page);
  return listAcrossConversations(who.accountId, page);
}

/**
 * The account-wide list may still index messages of a conversation being
 * purged; drop those and read on so a page stays full.
 */
async function listAcrossConversations(accountId: string, page: Awaited<ReturnType<typeof cursorPage>>) {
  const backwards = page.endingBefore !== undefined;
  const kept: Message[] = [];
  let request = page;
  for (let round = 0; round < 10; round++) {
    const result = await messages.listMessages(accountId, undefined, { ...request, limit: page.limit - kept.length });
    const live = await liveConversationIds(accountId, result.items);
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

async function liveConversationIds(accountId: string, list: Message[]): Promise<Set<string>> {
  const ids = [...new Set(list.map((m) => m.conversation_id))];
  const found = await batchGet(ids.map((id) => keys.conversation(accountId, id)), true);
  return new Set(found.map((item) => item.id as string));
}

export interface MessageUpdate {
  message?: string;
  reactions?: ReactionsInput;
  attachments?: AttachmentsInput;
  read?: boolean;
}

const MAX_ATTEMPTS = 5;
const MAX_MESSAGE_BYTES = 350 * 1024;

/** Read-modify-write with optimistic locking, so concurrent reactions are never lost. */
export async function updateMessage(who: Principal, id: string, update: MessageUpdate): Promise<Message> {
  const changes = update.reactions === undefined ? undefined : reactionChanges(update.reactions);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const current = await getMessage(who, id);
    const next: Message = { ...current };
    if (update.message !== undefined) next.message = update.message;
    if (update.reactions !== undefined) next.reactions = applyReactions(current.reactions, changes!);
    if (update.attachments !== undefined) next.attachments = mergeAttachments(current.attachments, update.attachments);
    if (update.read && current.read_at === null) next.read_at = nowSeconds();
    if (JSON.stringify(next) === JSON.stringify(current)) return current;
    next.updated_at = nowSeconds();
    // DynamoDB items stop at 400 KB; refuse growth past a safe margin instead of failing the write.
    if (Buffer.byteLength(JSON.stringify(next)) > MAX_MESSAGE_BYTES) {
      throw badRequest('The message with its reactions and attachments would be too large', 'reactions', 'message_too_large');
    }
    if ((await messages.replaceMessage(current, next)) === 'ok') return { ...next, version: current.version + 1 };
  }
  throw conflict('The message is being changed by another request; retry', 'concurrent_update');
}

export async function deleteMessage(who: Principal, id: string): Promise<void> {
  if (!(await visibleMessage(who, id))) throw notFound('message', id, 'id');
  const deleted = await messages.deleteMessage(who.accountId, id);
  if (!deleted) throw notFound('message', id, 'id');
  await clearPinnedMessage(who.accountId, deleted.conversation_id, id);
}
