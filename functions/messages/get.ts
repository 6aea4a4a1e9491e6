import { messagingEndpoint } from '#shared/http/messaging';
import { messageId } from '#shared/http/path-ids';
import { getMessage } from '#shared/messaging/messages';
import { presentMessages } from '#shared/messaging/present';

export const handler = messagingEndpoint({ path: messageId }, async ({ principal, id }) => {
  const [message] = await presentMessages(principal.accountId, [await getMessage(principal, id)]);
  return { body: message };
});
