import { messagingEndpoint } from '#shared/http/messaging';
import { listMessages } from '#shared/messaging/messages';
import { listResponse, presentMessages } from '#shared/messaging/present';
import { listMessagesQuery } from '#shared/http/messaging-schemas';

export const handler = messagingEndpoint({ query: listMessagesQuery }, async ({ principal, query }) => {
  const page = await listMessages(principal, query);
  return { body: listResponse(await presentMessages(principal.accountId, page.items), page.hasMore) };
});
