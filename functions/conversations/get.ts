import { chatEndpoint } from '#shared/http/chat';
import { getConversation } from '#shared/messaging/conversations';
import { presentConversation } from '#shared/messaging/present';

export const handler = chatEndpoint({}, async ({ principal, pathId }) => ({
  body: presentConversation(await getConversation(principal, pathId)),
}));
