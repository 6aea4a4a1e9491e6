import { messagingEndpoint } from '#shared/http/messaging';
import { messageId } from '#shared/http/path-ids';
import { getMessage } from '#shared/messaging/messages';
import { showMessages } from '#shared/messaging/show';

export const handler = messagingEndpoint({ path: messageId }, async ({ principal, id }) => {
  const [message] = await showMessages(principal.accountId, [await getMessage(principal, id)]);
  return { body: message };
});
