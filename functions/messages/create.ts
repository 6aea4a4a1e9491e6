import { messagingEndpoint } from '#shared/http/messaging';
import { sendMessageBy } from '#shared/messaging/messages';
import { showMessages } from '#shared/messaging/show';
import { createMessageBody } from '#shared/http/messaging-schemas';
import { idempotent } from '#shared/http/idempotency';

export const handler = messagingEndpoint(
  { body: createMessageBody, idempotent: idempotent() },
  async ({ principal, body, idempotency }) => {
    const { message, sender } = await sendMessageBy(principal, body, idempotency);
    // The sender as the send read and marked it; read afresh only for a replay of a send already stored.
    const load = sender ? async () => new Map([[sender.id, sender]]) : undefined;
    const [shown] = await showMessages(principal.accountId, [message], load ? { load } : { fresh: true });
    return { status: 201, body: shown };
  },
);
