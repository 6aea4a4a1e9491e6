import { emailEndpoint } from '#shared/http/email';
import { getList } from '#shared/email/lists';
import { presentEmailList } from '#shared/email/present';
import { emailListId } from '#shared/http/path-ids';

export const handler = emailEndpoint({ path: emailListId }, async ({ caller, id }) => ({
  body: presentEmailList(await getList(caller, id)),
}));
