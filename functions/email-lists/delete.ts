import { deleted } from '#shared/http/endpoint';
import { emailEndpoint } from '#shared/http/email';
import { deleteList } from '#shared/email/list-delete';
import { emailListId } from '#shared/http/path-ids';

/** Purge inline for up to this long, then continue from the queue. */
const INLINE_PURGE_MS = 5_000;

export const handler = emailEndpoint({ path: emailListId }, async ({ caller, id }) => {
  await deleteList(caller, id, Date.now() + INLINE_PURGE_MS);
  return deleted(id);
});
