import { platformEndpoint } from '#shared/http/messaging';
import { contactId, pathPair, tokenId } from '#shared/http/path-ids';
import { revokeContactToken } from '#shared/platform/tokens';

/** Revokes the token; the answer is a delete's `{"id", "deleted": true}` with the token as it now stands (`revoked_at`) beside it. */
export const handler = platformEndpoint({ path: pathPair(contactId, tokenId) }, async ({ caller, id: [contact, token] }) => {
  const { id, ...revoked } = await revokeContactToken(caller, contact, token);
  return { body: { id, deleted: true, ...revoked } };
});
