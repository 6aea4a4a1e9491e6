import { platformEndpoint } from '#shared/http/messaging';
import { listQuery } from '#shared/http/platform-schemas';
import { listResponse } from '#shared/messaging/present';
import { listContacts, presentContact } from '#shared/platform/contacts';

export const handler = platformEndpoint({ query: listQuery }, async ({ caller, query }) => {
  const page = await listContacts(caller, query);
  return { body: listResponse(page.items.map(presentContact), page.hasMore) };
});
