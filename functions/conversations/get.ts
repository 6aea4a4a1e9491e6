import { chatEndpoint } from '#shared/http/chat';
import { conversationId } from '#shared/http/path-ids';
import { getConversation } from '#shared/messaging/conversations';
import { presentConversation } from '#shared/messaging/present';

export const handler = chatEndpoint({ path: conversationId }, async ({ principal, id }) => ({
  body: presentConversation(await getConversation(principal, id)),
}));
