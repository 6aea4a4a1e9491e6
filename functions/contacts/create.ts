import { platformEndpoint } from '#shared/http/messaging';
import { createContactBody } from '#shared/http/platform-schemas';
import { createContact, presentContact } from '#shared/platform/contacts';
import { idempotent } from '#shared/http/idempotency';

export const handler = platformEndpoint({ body: createContactBody, idempotent: idempotent() }, async ({ caller, body, idempotency }) => ({
  status: 201,
  body: presentContact(await createContact(caller, body, idempotency)),
}));
