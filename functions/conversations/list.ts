import { messagingEndpoint } from '#shared/http/messaging';
import { listConversations } from '#shared/messaging/conversations';
import { listResponse, presentConversation } from '#shared/messaging/present';
import { listConversationsQuery } from '#shared/http/messaging-schemas';

export const handler = messagingEndpoint({ query: listConversationsQuery }, async ({ principal, query }) => {
  const page = await listConversations(principal, query);
  return { body: listResponse(page.items.map(presentConversation), page.hasMore) };
});
