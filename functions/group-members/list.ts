import { platformEndpoint } from '#shared/http/messaging';
import { groupId } from '#shared/http/path-ids';
import { listQuery } from '#shared/http/platform-schemas';
import { listResponse } from '#shared/messaging/present';
import { listGroupMembers } from '#shared/platform/groups';

export const handler = platformEndpoint({ path: groupId, query: listQuery }, async ({ caller, id, query }) => {
  const page = await listGroupMembers(caller, id, query);
  return { body: listResponse(page.items, page.hasMore) };
});
