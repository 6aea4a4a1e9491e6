import { platformEndpoint } from '#shared/http/messaging';
import { createContactBody } from '#shared/http/platform-schemas';
import { createContact, presentContact } from '#shared/platform/contacts';

export const handler = platformEndpoint({ body: createContactBody, idempotent: true }, async ({ caller, body, idempotency }) => ({
  status: 201,
  body: presentContact(await createContact(caller, body, idempotency)),
}));
