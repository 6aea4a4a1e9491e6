import { messagingEndpoint } from '#shared/http/messaging';
import { sendMessage } from '#shared/messaging/messages';
import { showMessages } from '#shared/messaging/show';
import { createMessageBody } from '#shared/http/messaging-schemas';
import { idempotent } from '#shared/http/idempotency';

export const handler = messagingEndpoint(
  { body: createMessageBody, idempotent: idempotent('per-user') },
  async ({ principal, body, idempotency }) => {
    const [message] = await showMessages(principal.accountId, [await sendMessage(principal, body, idempotency)], { fresh: true });
    return { status: 201, body: message };
  },
);
