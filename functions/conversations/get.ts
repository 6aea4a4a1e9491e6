import { messagingEndpoint } from '#shared/http/messaging';
import { conversationId } from '#shared/http/path-ids';
import { getConversation } from '#shared/messaging/conversations';
import { presentConversation } from '#shared/messaging/present';

export const handler = messagingEndpoint({ path: conversationId }, async ({ principal, id }) => ({
  body: presentConversation(await getConversation(principal, id)),
}));
