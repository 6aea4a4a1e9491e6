import { chatEndpoint } from '#shared/http/chat';
import { updateConversation } from '#shared/messaging/conversations';
import { presentConversation } from '#shared/messaging/present';
import { updateConversationBody } from '#shared/messaging/schemas';

export const handler = chatEndpoint({ body: updateConversationBody }, async ({ principal, pathId, body }) => ({
  body: presentConversation(await updateConversation(principal, pathId, body)),
}));
