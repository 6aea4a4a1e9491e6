import * as v from 'valibot';
import { parseItem } from '#shared/db/item-schema';
import type { TransactItem } from '#shared/db/batch';
import { transactWrite, txPut, txUpdate } from '#shared/db/batch';
import { condition, update } from '#shared/db/expression';
import { conditionHeld, getItem, unlessConditionFails, updateItem } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import { newId, nowSeconds } from '#shared/util/ids';
import type { RateLimits } from '#shared/rate-limits';

export interface Account {
  account_id: string;
  name: string;
  /** Validation credit balance; absent means unlimited. */
  credits?: number;
  /** The account's own rate limit across both APIs; absent: the deployment's default (shared/rate-limits.ts). */
  rate_limits?: RateLimits;
  created_at: number;
}

// Built in a /* @__PURE__ */ call, so that esbuild drops it from functions that never read this item (shared/db/item-schema.ts).
const accountItem = /* @__PURE__ */ (() =>
  v.object({
    account_id: v.string(),
    name: v.string(),
    credits: v.optional(v.number()),
    rate_limit: v.optional(v.number()),
    burst_limit: v.optional(v.number()),
    created_at: v.number(),
  }))();

export async function createAccount(input: { name: string; credits?: number }): Promise<Account> {
  const account: Account = { account_id: newId('acct'), name: input.name, created_at: nowSeconds() };
  if (input.credits !== undefined) account.credits = input.credits;
  // With its webhook endpoint count at 0 (shared/data/webhooks.ts): its creates need not count what it has first.
  const isNew = condition`attribute_not_exists(pk)`;
  await transactWrite({
    TransactItems: [
      txPut({ ...keys.account.key({ acct: account.account_id }), type: 'account', ...account }, isNew),
      txPut({ ...keys.webhookCount.key({ acct: account.account_id }), type: 'webhook_count', endpoints: 0 }, isNew),
    ],
  });
  return account;
}

export async function getAccount(accountId: string): Promise<Account | undefined> {
  const item = await getItem(keys.account.key({ acct: accountId }));
  if (!item) return undefined;
  const { credits, rate_limit, burst_limit, ...account } = parseItem(accountItem, item);
  return {
    ...account,
    ...(credits === undefined ? {} : { credits }),
    ...(rate_limit === undefined || burst_limit === undefined ? {} : { rate_limits: { rateLimit: rate_limit, burstLimit: burst_limit } }),
  };
}

/** Sets the account's own rate limits, or (undefined) goes back to the default; false when the account does not exist. */
export async function setAccountLimits(accountId: string, limits: RateLimits | undefined): Promise<boolean> {
  const changes = limits
    ? update().set`rate_limit = ${limits.rateLimit}`.set`burst_limit = ${limits.burstLimit}`.when`attribute_exists(pk)`
    : update().remove`rate_limit`.remove`burst_limit`.when`attribute_exists(pk)`;
  return conditionHeld(updateItem(keys.account.key({ acct: accountId }), changes));
}

/** Adds to the balance atomically; returns undefined when the account does not exist. */
export async function addCredits(accountId: string, amount: number): Promise<number | undefined> {
  const changes = update().set`credits = if_not_exists(credits, ${0}) + ${amount}`.when`attribute_exists(pk)`;
  const out = await unlessConditionFails(updateItem(keys.account.key({ acct: accountId }), changes, 'UPDATED_NEW'));
  return out?.credits as number | undefined;
}

/** The account's validation credits; undefined means unlimited. */
export async function creditBalance(accountId: string): Promise<number | undefined> {
  const credits = (await getItem(keys.account.key({ acct: accountId }), true))?.credits;
  return credits === undefined ? undefined : Number(credits);
}

/** Transaction part: takes `amount` credits, failing the whole transaction if the balance is short. */
export const debitCredits = (accountId: string, amount: number): TransactItem =>
  txUpdate(keys.account.key({ acct: accountId }), update().set`credits = credits - ${amount}`.when`credits >= ${amount}`);
