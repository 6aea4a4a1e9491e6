import { messagingEndpoint } from '#shared/http/messaging';
import { messageId } from '#shared/http/path-ids';
import { deleted } from '#shared/http/endpoint';
import { deleteMessage } from '#shared/messaging/messages';

export const handler = messagingEndpoint({ path: messageId }, async ({ principal, id }) => {
  await deleteMessage(principal, id);
  return deleted(id);
});
