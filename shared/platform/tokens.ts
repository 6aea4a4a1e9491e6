import { createToken, findToken, listContactTokens, revokeTokenById, type TokenInfo } from '#shared/data/tokens';
import type { Hold } from '#shared/data/idempotency';
import type { Tenant } from '#shared/data/tokens';
import { notFound } from '#shared/errors';
import { cursorPage, type CursorQuery } from '#shared/messaging/cursor';
import { requireContact } from '#shared/platform/contacts';
import { derivedId } from '#shared/util/ids';

/** A user token as the API shows it; the token itself only in the answer to its creation. */
export const presentToken = (t: TokenInfo) => ({
  id: t.id,
  contact_id: t.contact_id,
  created_at: t.created_at,
  expires_at: t.expires_at,
  revoked_at: t.revoked_at,
});

/**
 * A new user token for a live contact of the account, optionally expiring
 * after `expiresIn` seconds. A retry of an interrupted idempotent request
 * finds the token its first attempt issued, and answers it without the token
 * itself (only its hash was kept): nothing is issued twice.
 */
export async function issueContactToken(who: Tenant, contactId: string, expiresIn?: number, idempotency?: Hold) {
  await requireContact(who, contactId, 'id', true);
  const id = idempotency ? derivedId('tok', idempotency.createdMs, idempotency.generation) : undefined;
  const earlier = id && idempotency?.resumed ? await findToken(id) : undefined;
  if (earlier) return presentToken(earlier);
  const issued = await createToken({ accountId: who.accountId, contactId }, expiresIn, id);
  return { ...presentToken(issued), token: issued.token };
}

export async function listTokens(who: Tenant, contactId: string, query: CursorQuery) {
  await requireContact(who, contactId);
  const principal = { accountId: who.accountId, contactId };
  const page = await cursorPage(query, async (id) => {
    const token = await findToken(id);
    return token?.account_id === who.accountId && token.contact_id === contactId;
  });
  return listContactTokens(principal, page);
}

/** Revokes one of the contact's tokens: refused from the next request on (the authorizer's cache aside). */
export async function revokeContactToken(who: Tenant, contactId: string, tokenId: string) {
  await requireContact(who, contactId);
  const revoked = await revokeTokenById(tokenId, { accountId: who.accountId, contactId });
  if (!revoked) throw notFound('token', tokenId, 'token_id');
  return presentToken(revoked);
}
