import { emailEndpoint } from '#shared/http/email';
import { createList } from '#shared/email/lists';
import { presentEmailList } from '#shared/email/present';
import { createListBody } from '#shared/http/email-schemas';

export const handler = emailEndpoint({ body: createListBody }, async ({ caller, body }) => ({
  status: 201,
  body: presentEmailList(await createList(caller, body)),
}));
