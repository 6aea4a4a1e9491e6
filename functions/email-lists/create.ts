import { emailEndpoint } from '#shared/http/email';
import { createList } from '#shared/email/list-create';
import { presentEmailList } from '#shared/email/present';
import { createListBody } from '#shared/http/email-schemas';
import { idempotent } from '#shared/http/idempotency';

export const handler = emailEndpoint({ body: createListBody, idempotent: idempotent() }, async ({ caller, body, idempotency }) => ({
  status: 201,
  body: presentEmailList(await createList(caller, body, idempotency)),
}));
