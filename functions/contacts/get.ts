import { platformEndpoint } from '#shared/http/messaging';
import { contactId } from '#shared/http/path-ids';
import { presentContact, requireContact } from '#shared/platform/contacts';

/** Also a user's read-only directory of their account's contacts. */
export const handler = platformEndpoint({ path: contactId, credential: 'any' }, async ({ caller, id }) => ({
  body: presentContact(await requireContact(caller, id)),
}));
