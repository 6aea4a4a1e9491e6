import { platformEndpoint } from '#shared/http/messaging';
import { contactId } from '#shared/http/path-ids';
import { updateContactBody } from '#shared/http/platform-schemas';
import { presentContact, updateContact } from '#shared/platform/contacts';

export const handler = platformEndpoint({ path: contactId, body: updateContactBody }, async ({ caller, id, body }) => ({
  body: presentContact(await updateContact(caller, id, body)),
}));
