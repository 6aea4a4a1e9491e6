import { chatEndpoint } from '#shared/http/chat';
import { updateMessage } from '#shared/messaging/messages';
import { presentMessages } from '#shared/messaging/present';
import { updateMessageBody } from '#shared/messaging/schemas';

export const handler = chatEndpoint({ body: updateMessageBody }, async ({ principal, pathId, body }) => {
  const [message] = await presentMessages(principal.accountId, [await updateMessage(principal, pathId, body)], { fresh: true });
  return { body: message };
});
