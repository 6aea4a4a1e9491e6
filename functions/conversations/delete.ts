import { messagingEndpoint } from '#shared/http/messaging';
import { conversationId } from '#shared/http/path-ids';
import { deleted } from '#shared/http/endpoint';
import { deleteConversation } from '#shared/messaging/conversations';

/** Purge inline for up to this long, then continue from the queue. */
const INLINE_PURGE_MS = 5_000;

export const handler = messagingEndpoint({ path: conversationId }, async ({ principal, id }) => {
  await deleteConversation(principal, id, Date.now() + INLINE_PURGE_MS);
  return deleted(id);
});
