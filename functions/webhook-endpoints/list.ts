import { platformEndpoint } from '#shared/http/messaging';
import { listQuery } from '#shared/http/platform-schemas';
import { listResponse } from '#shared/messaging/present';
import { pageOf } from '#shared/messaging/cursor';
import { listWebhooks, presentWebhookEndpoint } from '#shared/webhooks/manage';

export const handler = platformEndpoint({ query: listQuery }, async ({ caller, query }) => {
  const page = pageOf(await listWebhooks(caller.accountId), query);
  return {
    body: listResponse(
      page.items.map((w) => presentWebhookEndpoint(w)),
      page.hasMore,
    ),
  };
});
