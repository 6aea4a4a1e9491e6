import { emailEndpoint } from '#shared/http/email';
import { getList } from '#shared/email/lists';
import { presentEmailList } from '#shared/email/present';
import { numericId } from '#shared/email/schemas';

export const handler = emailEndpoint({}, async ({ principal, pathId }) => ({
  body: presentEmailList(await getList(principal, numericId(pathId))),
}));
