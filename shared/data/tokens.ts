import { createHash, randomBytes } from 'node:crypto';
import * as z from 'zod/mini';
import { update } from '#shared/db/expression';
import { conditionHeld, getItem, putNew, updateItem } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import { nowSeconds } from '#shared/util/ids';

export interface Principal {
  accountId: string;
  contactId: string;
}

/** Only the hash is stored, so a table dump yields no usable token. */
export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** 32 random bytes, URL-safe; the prefix makes leaked tokens easy to scan for. */
export const generateToken = () => `tok_${randomBytes(32).toString('base64url')}`;

export const TOKEN_PATTERN = /^tok_[A-Za-z0-9_-]{43}$/;

export async function issueToken(principal: Principal): Promise<string> {
  const token = generateToken();
  await putNew({
    ...keys.token.key({ token_hash: hashToken(token) }),
    type: 'token',
    account_id: principal.accountId,
    contact_id: principal.contactId,
    created_at: nowSeconds(),
  });
  return token;
}

const tokenItem = z.object({ account_id: z.string(), contact_id: z.string(), revoked_at: z.optional(z.number()) });

export async function findPrincipal(token: string): Promise<Principal | undefined> {
  if (!TOKEN_PATTERN.test(token)) return undefined;
  // Consistent, so a revoked token stops working on the very next request.
  const item = await getItem(keys.token.key({ token_hash: hashToken(token) }), true);
  if (!item) return undefined;
  const stored = tokenItem.parse(item);
  if (stored.revoked_at !== undefined) return undefined;
  return { accountId: stored.account_id, contactId: stored.contact_id };
}

/** Returns false when no such token was ever issued. */
export async function revokeToken(token: string): Promise<boolean> {
  const changes = update().set`revoked_at = if_not_exists(revoked_at, ${nowSeconds()})`.when`attribute_exists(pk)`;
  return conditionHeld(updateItem(keys.token.key({ token_hash: hashToken(token) }), changes));
}
