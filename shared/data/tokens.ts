import { createHash, randomBytes } from 'node:crypto';
import * as v from 'valibot';
import { parseItem } from '#shared/db/item-schema';
import { update } from '#shared/db/expression';
import { conditionHeld, getItem, putNew, query, updateItem } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import { newId, nowSeconds } from '#shared/util/ids';

export interface Principal {
  accountId: string;
  contactId: string;
}

/** Only the hash is stored, so a table dump yields no usable token. */
export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** 32 random bytes, URL-safe; the prefix makes leaked tokens easy to scan for. */
export const generateToken = () => `tok_${randomBytes(32).toString('base64url')}`;

export const TOKEN_PATTERN = /^tok_[A-Za-z0-9_-]{43}$/;

/**
 * An Authorization header that can carry a token: API Gateway's identity
 * validation (Java regex syntax, so no flags) and the local gateway refuse
 * anything else with 401 before the authorizer runs.
 */
export const AUTHORIZATION_PATTERN = new RegExp(`^[Bb][Ee][Aa][Rr][Ee][Rr]\\s+${TOKEN_PATTERN.source.slice(1, -1)}\\s*$`);

export async function issueToken(principal: Principal): Promise<string> {
  return (await issueTokenWithId(principal)).token;
}

/** The token, shown once, and its id: what the admin command line lists and revokes it by. */
export async function issueTokenWithId(principal: Principal): Promise<{ token: string; id: string }> {
  const token = generateToken();
  const id = newId('tkn');
  await putNew({
    ...keys.token.key({ token_hash: hashToken(token) }),
    ...keys.accountTokens.entry({ acct: principal.accountId, tkn: id }),
    ...keys.tokenById.entry({ tkn: id }),
    type: 'token',
    token_id: id,
    account_id: principal.accountId,
    contact_id: principal.contactId,
    created_at: nowSeconds(),
  });
  return { token, id };
}

/** What may be shown about a token: never the token, nor its hash. */
export interface TokenInfo {
  id: string;
  contact_id: string;
  created_at: number;
  revoked_at: number | null;
}

// Built in a /* @__PURE__ */ call, so that esbuild drops it from functions that never read this item (shared/db/item-schema.ts).
const listedToken = /* @__PURE__ */ (() =>
  v.object({ token_id: v.string(), contact_id: v.string(), created_at: v.number(), revoked_at: v.optional(v.number()) }))();

const tokenInfo = (item: Record<string, unknown>): TokenInfo => {
  const stored = parseItem(listedToken, item);
  return { id: stored.token_id, contact_id: stored.contact_id, created_at: stored.created_at, revoked_at: stored.revoked_at ?? null };
};

/** An account's tokens, oldest first (tokens issued before ids existed have none and are not listed). */
export async function listTokens(accountId: string, limit = 1000): Promise<TokenInfo[]> {
  const items = await query({ index: keys.accountTokens.index, partition: keys.accountTokens.partition({ acct: accountId }) }, limit);
  return items.map(tokenInfo);
}

/** Revokes the token with this id; false when there is none. */
export async function revokeTokenById(tokenId: string): Promise<boolean> {
  const [item] = await query({ index: keys.tokenById.index, partition: keys.tokenById.partition({ tkn: tokenId }) }, 1);
  return item ? revokeKey({ pk: item.pk as string, sk: item.sk as string }) : false;
}

// Built in a /* @__PURE__ */ call, so that esbuild drops it from functions that never read this item (shared/db/item-schema.ts).
const tokenItem = /* @__PURE__ */ (() =>
  v.object({ account_id: v.string(), contact_id: v.string(), revoked_at: v.optional(v.number()) }))();

export async function findPrincipal(token: string): Promise<Principal | undefined> {
  if (!TOKEN_PATTERN.test(token)) return undefined;
  // Consistent, so a revoked token stops working on the very next request.
  const item = await getItem(keys.token.key({ token_hash: hashToken(token) }), true);
  if (!item) return undefined;
  const stored = parseItem(tokenItem, item);
  if (stored.revoked_at !== undefined) return undefined;
  return { accountId: stored.account_id, contactId: stored.contact_id };
}

/** Returns false when no such token was ever issued. */
export const revokeToken = (token: string): Promise<boolean> => revokeKey(keys.token.key({ token_hash: hashToken(token) }));

function revokeKey(key: { pk: string; sk: string }): Promise<boolean> {
  const changes = update().set`revoked_at = if_not_exists(revoked_at, ${nowSeconds()})`.when`attribute_exists(pk)`;
  return conditionHeld(updateItem(key, changes));
}
