import { deleted } from '#shared/http/endpoint';
import { platformEndpoint } from '#shared/http/messaging';
import { contactId } from '#shared/http/path-ids';
import { deleteContact } from '#shared/platform/contacts';

/** Remove what the contact leaves inline for up to this long, then continue from the queue. */
const INLINE_PURGE_MS = 5_000;

export const handler = platformEndpoint({ path: contactId }, async ({ caller, id }) => {
  await deleteContact(caller, id, Date.now() + INLINE_PURGE_MS);
  return deleted(id);
});
