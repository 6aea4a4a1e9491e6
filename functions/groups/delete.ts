import { deleted } from '#shared/http/endpoint';
import { platformEndpoint } from '#shared/http/messaging';
import { groupId } from '#shared/http/path-ids';
import { deleteGroup } from '#shared/platform/groups';

/** Remove the members inline for up to this long, then continue from the queue. */
const INLINE_PURGE_MS = 5_000;

export const handler = platformEndpoint({ path: groupId }, async ({ caller, id }) => {
  await deleteGroup(caller, id, Date.now() + INLINE_PURGE_MS);
  return deleted(id);
});
