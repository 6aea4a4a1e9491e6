import { chatEndpoint } from '#shared/http/chat';
import { deleted } from '#shared/http/endpoint';
import { deleteConversation } from '#shared/messaging/conversations';

/** Purge inline for up to this long, then continue from the queue. */
const INLINE_PURGE_MS = 5_000;

export const handler = chatEndpoint({}, async ({ principal, pathId }) => {
  await deleteConversation(principal, pathId, Date.now() + INLINE_PURGE_MS);
  return deleted(pathId);
});
