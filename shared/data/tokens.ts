import { createHash, randomBytes } from 'node:crypto';
import * as v from 'valibot';
import { parseItem } from '#shared/db/item-schema';
import { update } from '#shared/db/expression';
import { conditionHeld, getItem, putNew, query, unlessConditionFails, updateItem } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import type { CursorPageRequest, Page } from '#shared/db/paging';
import { queryIndexPage } from '#shared/db/paging';
import { newId, nowSeconds } from '#shared/util/ids';

/** A user of the messaging API: the contact a user token belongs to. */
export interface Principal {
  accountId: string;
  contactId: string;
}

/** Whoever a request authenticated as: a contact (user token) or the account's own backend (secret key). */
export type Caller = ({ kind: 'user' } & Principal) | { kind: 'secret'; accountId: string; keyId: string };

/** What every account-scoped operation needs to know of its caller. */
export interface Tenant {
  accountId: string;
}

/** Only the hash is stored, so a table dump yields no usable credential. */
export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** 32 random bytes, URL-safe; the prefix tells the two credentials apart and makes leaked ones easy to scan for. */
const randomCredential = (prefix: 'tok' | 'sk') => `${prefix}_${randomBytes(32).toString('base64url')}`;
export const generateToken = () => randomCredential('tok');
export const generateSecretKey = () => randomCredential('sk');

export const TOKEN_PATTERN = /^tok_[A-Za-z0-9_-]{43}$/;
export const SECRET_KEY_PATTERN = /^sk_[A-Za-z0-9_-]{43}$/;

/**
 * An Authorization header that can carry a credential: API Gateway's identity
 * validation (Java regex syntax, so no flags) and the local gateway refuse
 * anything else with 401 before the authorizer runs.
 */
export const AUTHORIZATION_PATTERN = /^[Bb][Ee][Aa][Rr][Ee][Rr]\s+(tok|sk)_[A-Za-z0-9_-]{43}\s*$/;

/** Longest `expires_in` a token may have: a year. */
export const MAX_TOKEN_SECONDS = 31_536_000;

/** A user token as it may be shown: never the token itself, nor its hash. */
export interface TokenInfo {
  id: string;
  contact_id: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
}

/** Issues a user token; the token itself is returned only here. */
export async function createToken(principal: Principal, expiresIn?: number, tokenId?: string): Promise<TokenInfo & { token: string }> {
  const token = generateToken();
  const id = tokenId ?? newId('tok');
  const now = nowSeconds();
  const info: TokenInfo = {
    id,
    contact_id: principal.contactId,
    created_at: now,
    expires_at: expiresIn === undefined ? null : now + expiresIn,
    revoked_at: null,
  };
  await putNew({
    ...keys.token.key({ token_hash: hashToken(token) }),
    ...keys.contactTokens.entry({ acct: principal.accountId, ct: principal.contactId, tok: id }),
    ...keys.tokenById.entry({ tok: id }),
    type: 'token',
    token_id: id,
    account_id: principal.accountId,
    contact_id: principal.contactId,
    created_at: now,
    // The table's TTL attribute: DynamoDB removes an expired token some time after it stops working.
    ...(info.expires_at === null ? {} : { expires_at: info.expires_at }),
  });
  return { ...info, token };
}

/** Just the token (the demo seed, tests). */
export const issueToken = async (principal: Principal): Promise<string> => (await createToken(principal)).token;

// Built in a /* @__PURE__ */ call, so that esbuild drops it from functions that never read this item (shared/db/item-schema.ts).
const storedToken = /* @__PURE__ */ (() =>
  v.object({
    token_id: v.optional(v.string()),
    account_id: v.string(),
    contact_id: v.string(),
    created_at: v.optional(v.number()),
    expires_at: v.optional(v.number()),
    revoked_at: v.optional(v.number()),
  }))();

const tokenInfo = (item: Record<string, unknown>): TokenInfo => {
  const stored = parseItem(storedToken, item);
  return {
    id: stored.token_id ?? '',
    contact_id: stored.contact_id,
    created_at: stored.created_at ?? 0,
    expires_at: stored.expires_at ?? null,
    revoked_at: stored.revoked_at ?? null,
  };
};

/** A contact's tokens, newest first. */
export async function listContactTokens(principal: Principal, page: CursorPageRequest): Promise<Page<TokenInfo>> {
  const result = await queryIndexPage({
    index: keys.contactTokens.index,
    partitions: [keys.contactTokens.partition({ acct: principal.accountId, ct: principal.contactId })],
    ...page,
  });
  return { items: result.items.map(tokenInfo), hasMore: result.hasMore };
}

/** Every token key of a contact, a batch at a time (deleting the contact removes them). */
export async function contactTokenKeys(principal: Principal, limit: number) {
  const items = await query(
    {
      index: keys.contactTokens.index,
      partition: keys.contactTokens.partition({ acct: principal.accountId, ct: principal.contactId }),
      projection: 'pk, sk',
    },
    limit,
    1,
  );
  return items.map((item) => ({ pk: String(item.pk), sk: String(item.sk) }));
}

/** The stored token with this id, whoever it belongs to. */
async function tokenById(tokenId: string) {
  const [item] = await query({ index: keys.tokenById.index, partition: keys.tokenById.partition({ tok: tokenId }) }, 1, 1);
  return item;
}

/** The token with this id as shown; undefined when there is none. */
export async function findToken(tokenId: string): Promise<(TokenInfo & { account_id: string }) | undefined> {
  const item = await tokenById(tokenId);
  return item ? { ...tokenInfo(item), account_id: String(item.account_id) } : undefined;
}

/**
 * Revokes the token with this id when it belongs to `owner` (any contact of
 * the account when `owner` names none); the token as it now stands, or
 * undefined when there is no such token for them. Revoking twice keeps the
 * first time.
 */
export async function revokeTokenById(tokenId: string, owner?: Partial<Principal>): Promise<TokenInfo | undefined> {
  const item = await tokenById(tokenId);
  if (!item) return undefined;
  if (owner?.accountId !== undefined && item.account_id !== owner.accountId) return undefined;
  if (owner?.contactId !== undefined && item.contact_id !== owner.contactId) return undefined;
  const changes = revocation();
  const updated = await unlessConditionFails(updateItem({ pk: String(item.pk), sk: String(item.sk) }, changes, 'ALL_NEW'));
  return updated ? tokenInfo(updated) : undefined;
}

/** Revokes a token given the token itself; false when no such token was ever issued. */
export function revokeToken(token: string): Promise<boolean> {
  const changes = revocation();
  return conditionHeld(updateItem(keys.token.key({ token_hash: hashToken(token) }), changes));
}

/** A credential's revocation: the first time stays, and a credential that never existed is not created. */
export const revocation = () => update().set`revoked_at = if_not_exists(revoked_at, ${nowSeconds()})`.when`attribute_exists(pk)`;

// Built in a /* @__PURE__ */ call, so that esbuild drops it from functions that never read this item (shared/db/item-schema.ts).
const credentialItem = /* @__PURE__ */ (() =>
  v.object({
    type: v.optional(v.string()),
    account_id: v.string(),
    contact_id: v.optional(v.string()),
    key_id: v.optional(v.string()),
    expires_at: v.optional(v.number()),
    revoked_at: v.optional(v.number()),
  }))();

/** A stored credential that still works: not revoked, not expired. */
export const isLive = (item: Record<string, unknown>, now = nowSeconds()) =>
  item.revoked_at === undefined && !(typeof item.expires_at === 'number' && item.expires_at <= now);

/**
 * Who a bearer credential authenticates, or undefined (unknown, revoked,
 * expired, or not shaped like one). One consistent read, so a revocation
 * takes effect on the very next request.
 */
export async function findCaller(credential: string): Promise<Caller | undefined> {
  if (!TOKEN_PATTERN.test(credential) && !SECRET_KEY_PATTERN.test(credential)) return undefined;
  const item = await getItem(keys.token.key({ token_hash: hashToken(credential) }), true);
  if (!item || !isLive(item)) return undefined;
  const stored = parseItem(credentialItem, item);
  if (stored.type === 'secret_key') {
    return stored.key_id === undefined ? undefined : { kind: 'secret', accountId: stored.account_id, keyId: stored.key_id };
  }
  return stored.contact_id === undefined ? undefined : { kind: 'user', accountId: stored.account_id, contactId: stored.contact_id };
}

/** A user token's contact; undefined for anything else, a secret key included. */
export async function findPrincipal(token: string): Promise<Principal | undefined> {
  const caller = await findCaller(token);
  return caller?.kind === 'user' ? { accountId: caller.accountId, contactId: caller.contactId } : undefined;
}
