import { messagingEndpoint } from '#shared/http/messaging';
import { openConversation } from '#shared/messaging/conversations';
import { presentConversation } from '#shared/messaging/present';
import { createConversationBody } from '#shared/http/messaging-schemas';
import { idempotent } from '#shared/http/idempotency';

export const handler = messagingEndpoint({ body: createConversationBody, idempotent: idempotent() }, async ({ principal, body }) => {
  const { conversation, created } = await openConversation(principal, body);
  return { status: created ? 201 : 200, body: presentConversation(conversation) };
});
