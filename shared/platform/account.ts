import { getAccount } from '#shared/data/accounts';
import type { Tenant } from '#shared/data/tokens';
import { notFound } from '#shared/errors';
import { DEFAULT_ACCOUNT_LIMITS, type RateLimits } from '#shared/rate-limits';

/** The deployment's default per-account limit, as the stack (or `npm start`) set it. */
function defaultLimits(): RateLimits {
  const rate = Number(process.env.ACCOUNT_RATE_LIMIT);
  const burst = Number(process.env.ACCOUNT_BURST_LIMIT);
  return {
    rateLimit: rate > 0 ? rate : DEFAULT_ACCOUNT_LIMITS.rateLimit,
    burstLimit: burst > 0 ? burst : DEFAULT_ACCOUNT_LIMITS.burstLimit,
  };
}

/** The caller's account: its credits (null when unlimited) and the rate limit its requests get. */
export async function describeAccount(who: Tenant) {
  const account = await getAccount(who.accountId);
  if (!account) throw notFound('account', who.accountId);
  const limits = account.rate_limits ?? defaultLimits();
  return {
    id: account.account_id,
    name: account.name,
    credits: account.credits ?? null,
    rate_limit: { rate: limits.rateLimit, burst: limits.burstLimit },
    created_at: account.created_at,
  };
}
