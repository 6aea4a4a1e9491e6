import { chatEndpoint } from '#shared/http/chat';
import { getMessage } from '#shared/messaging/messages';
import { presentMessages } from '#shared/messaging/present';

export const handler = chatEndpoint({}, async ({ principal, pathId }) => {
  const [message] = await presentMessages(principal.accountId, [await getMessage(principal, pathId)]);
  return { body: message };
});
