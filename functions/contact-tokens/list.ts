import { platformEndpoint } from '#shared/http/messaging';
import { contactId } from '#shared/http/path-ids';
import { listQuery } from '#shared/http/platform-schemas';
import { listResponse } from '#shared/messaging/present';
import { listTokens, presentToken } from '#shared/platform/tokens';

export const handler = platformEndpoint({ path: contactId, query: listQuery }, async ({ caller, id, query }) => {
  const page = await listTokens(caller, id, query);
  return { body: listResponse(page.items.map(presentToken), page.hasMore) };
});
