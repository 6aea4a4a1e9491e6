import { platformEndpoint } from '#shared/http/messaging';
import { contactId, pathPair, tokenId } from '#shared/http/path-ids';
import { revokeContactToken } from '#shared/platform/tokens';

/** Revokes the token; the answer is the token as it now stands, with `revoked_at`. */
export const handler = platformEndpoint({ path: pathPair(contactId, tokenId) }, async ({ caller, id: [contact, token] }) => ({
  body: await revokeContactToken(caller, contact, token),
}));
