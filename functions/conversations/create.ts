import { chatEndpoint } from '#shared/http/chat';
import { openConversation } from '#shared/messaging/conversations';
import { presentConversation } from '#shared/messaging/present';
import { createConversationBody } from '#shared/http/messaging-schemas';

export const handler = chatEndpoint({ body: createConversationBody }, async ({ principal, body }) => {
  const { conversation, created } = await openConversation(principal, body);
  return { status: created ? 201 : 200, body: presentConversation(conversation) };
});
