import { messagingEndpoint } from '#shared/http/messaging';
import { conversationId } from '#shared/http/path-ids';
import { updateConversation } from '#shared/messaging/conversations';
import { presentConversation } from '#shared/messaging/present';
import { updateConversationBody } from '#shared/http/messaging-schemas';

export const handler = messagingEndpoint({ path: conversationId, body: updateConversationBody }, async ({ principal, id, body }) => ({
  body: presentConversation(await updateConversation(principal, id, body)),
}));
