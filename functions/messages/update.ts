import { messagingEndpoint } from '#shared/http/messaging';
import { messageId } from '#shared/http/path-ids';
import { updateMessage } from '#shared/messaging/messages';
import { showMessages } from '#shared/messaging/show';
import { updateMessageBody } from '#shared/http/messaging-schemas';

export const handler = messagingEndpoint(
  { path: messageId, body: updateMessageBody, formMaps: ['reactions'] },
  async ({ principal, id, body }) => {
    const [message] = await showMessages(principal.accountId, [await updateMessage(principal, id, body)], { fresh: true });
    return { body: message };
  },
);
