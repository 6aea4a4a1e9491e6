import { getAccount } from '#shared/data/accounts';
import { DEFAULT_ACCOUNT_LIMITS, MAX_RATE_LIMIT, TokenBuckets, type Admission, type Quota, type RateLimits } from '#shared/rate-limits';

/** What the local gateway asks before it invokes a handler for an authenticated account. */
export interface AccountRateLimiter {
  admit(accountId: string): Promise<Admission>;
}

/** An account's limits are read again after this long, so `account limits` takes effect within it under `npm start`. */
const LIMITS_CACHE_MS = 1000;

/**
 * The local twin of the usage plans (docs/operations.md, Rate limits): one
 * token bucket per account, shared by both APIs' servers, at the account's
 * own limits when the admin command line set some, the defaults otherwise.
 */
export function accountRateLimiter(
  defaults: RateLimits = localDefaultLimits(),
  limitsOf: (accountId: string) => Promise<RateLimits | undefined> = async (id) => (await getAccount(id))?.rate_limits,
): AccountRateLimiter {
  const buckets = new TokenBuckets();
  const cached = new Map<string, { limits: RateLimits; until: number }>();
  return {
    async admit(accountId) {
      let entry = cached.get(accountId);
      if (!entry || entry.until < Date.now()) {
        entry = { limits: (await limitsOf(accountId)) ?? defaults, until: Date.now() + LIMITS_CACHE_MS };
        cached.set(accountId, entry);
        // Bounded like the buckets: expired entries go when the map grows.
        if (cached.size > 10_000) for (const [id, e] of cached) if (e.until < Date.now()) cached.delete(id);
      }
      return buckets.take(accountId, entry.limits);
    },
  };
}

/** `npm start`'s defaults: ACCOUNT_RATE_LIMIT and ACCOUNT_BURST_LIMIT, named like the deploy settings, else the deployment's own defaults. */
export function localDefaultLimits(env: NodeJS.ProcessEnv = process.env): RateLimits {
  return {
    rateLimit: positive(env.ACCOUNT_RATE_LIMIT, 'ACCOUNT_RATE_LIMIT', DEFAULT_ACCOUNT_LIMITS.rateLimit, false),
    burstLimit: positive(env.ACCOUNT_BURST_LIMIT, 'ACCOUNT_BURST_LIMIT', DEFAULT_ACCOUNT_LIMITS.burstLimit, true),
  };
}

function positive(raw: string | undefined, name: string, fallback: number, integer: boolean): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > MAX_RATE_LIMIT || (integer && !Number.isInteger(value))) {
    throw new Error(`${name} must be a positive ${integer ? 'integer' : 'number'} up to ${MAX_RATE_LIMIT}, got '${raw}'`);
  }
  return value;
}

/**
 * The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers,
 * the three-field form) for an answer counted against an account: the
 * burst, the requests left, the seconds until the bucket is full again.
 * Local only: API Gateway's usage plans throttle without telling a client
 * its budget, and a header added by the functions could not know it.
 */
export const rateLimitHeaders = (quota: Quota): Record<string, string> => ({
  'RateLimit-Limit': String(quota.limit),
  'RateLimit-Remaining': String(quota.remaining),
  'RateLimit-Reset': String(quota.resetSeconds),
});
