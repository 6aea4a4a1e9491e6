import { emailEndpoint, pageResponse } from '#shared/http/email';
import { listLists } from '#shared/email/lists';
import { presentEmailList } from '#shared/email/present';
import { pageQuery } from '#shared/http/email-schemas';

export const handler = emailEndpoint({ query: pageQuery }, async ({ caller, query }) => {
  const { lists, position } = await listLists(caller, query.page ?? 1);
  return { body: pageResponse('emailLists', lists.map(presentEmailList), position) };
});
