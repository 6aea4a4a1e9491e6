import { messagingEndpoint } from '#shared/http/messaging';
import { listMessages } from '#shared/messaging/messages';
import { showMessagePage } from '#shared/messaging/show';
import { listMessagesQuery } from '#shared/http/messaging-schemas';

export const handler = messagingEndpoint({ query: listMessagesQuery }, async ({ principal, query }) => ({
  body: await showMessagePage(principal.accountId, await listMessages(principal, query), query.ending_before !== undefined),
}));
