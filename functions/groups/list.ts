import { platformEndpoint } from '#shared/http/messaging';
import { listQuery } from '#shared/http/platform-schemas';
import { listResponse } from '#shared/messaging/present';
import { listGroups, presentGroup } from '#shared/platform/groups';

export const handler = platformEndpoint({ query: listQuery }, async ({ caller, query }) => {
  const page = await listGroups(caller, query);
  return { body: listResponse(page.items.map(presentGroup), page.hasMore) };
});
