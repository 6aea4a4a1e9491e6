import { messagingEndpoint } from '#shared/http/messaging';
import { listMessages } from '#shared/messaging/messages';
import { listResponse } from '#shared/messaging/present';
import { showMessages } from '#shared/messaging/show';
import { listMessagesQuery } from '#shared/http/messaging-schemas';

export const handler = messagingEndpoint({ query: listMessagesQuery }, async ({ principal, query }) => {
  const page = await listMessages(principal, query);
  return { body: listResponse(await showMessages(principal.accountId, page.items), page.hasMore) };
});
