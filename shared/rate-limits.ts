/**
 * Per-account rate limits (docs/operations.md, Rate limits): on AWS an API
 * Gateway usage plan per account key, under `npm start` the same token
 * bucket in the local gateway. Nothing here knows API Gateway or HTTP.
 */

export interface RateLimits {
  /** Steady requests per second. */
  rateLimit: number;
  /** Requests that may arrive at once after a quiet spell. */
  burstLimit: number;
}

/** Each account's limit across both APIs unless it has its own (deploy settings `accountRateLimit`, `accountBurstLimit`). */
export const DEFAULT_ACCOUNT_LIMITS: RateLimits = { rateLimit: 50, burstLimit: 100 };

/** The most a rate or burst may be: API Gateway's default regional account limit. */
export const MAX_RATE_LIMIT = 10_000;

/**
 * The value of an account's API Gateway key, which the authorizer returns as
 * `usageIdentifierKey`. Clients never send it (the APIs take keys from the
 * authorizer only), so it need not be secret: it is the account id without
 * its separator, as key values are 20 to 128 alphanumeric characters.
 */
export const usageKeyValue = (accountId: string): string => accountId.replace(/[^A-Za-z0-9]/g, '');

export const defaultUsagePlanName = (stackName: string) => `${stackName}-accounts-default`;
export const accountUsagePlanName = (stackName: string, accountId: string) => `${stackName}-account-${accountId}`;
export const usageKeyName = (stackName: string, accountId: string) => `${stackName}-${accountId}`;

/** Where a key's bucket stands after a request: what the IETF RateLimit header fields say. */
export interface Quota {
  /** Requests the bucket holds when full (the burst). */
  limit: number;
  /** Whole requests left in it now. */
  remaining: number;
  /** Seconds until it is full again (0 when it is). */
  resetSeconds: number;
}

export type Admission = ({ admitted: true } | { admitted: false; retryAfterSeconds: number }) & { quota: Quota };

interface Bucket {
  tokens: number;
  at: number;
  limits: RateLimits;
}

/**
 * One token bucket per key: `burstLimit` tokens, refilled at `rateLimit` per
 * second, one taken per request, as API Gateway's throttling is described.
 * Buckets that have refilled are dropped when the map passes `maxKeys`, so
 * memory stays bounded however many accounts call.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly now: () => number = () => performance.now() / 1000,
    private readonly maxKeys = 10_000,
  ) {}

  /** Keys with a bucket held. */
  get size(): number {
    return this.buckets.size;
  }

  take(key: string, limits: RateLimits): Admission {
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: limits.burstLimit, at: now, limits };
    bucket.tokens = Math.min(limits.burstLimit, bucket.tokens + (now - bucket.at) * limits.rateLimit);
    bucket.at = now;
    bucket.limits = limits;
    if (!this.buckets.has(key) && this.buckets.size >= this.maxKeys) this.dropFull(now);
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { admitted: true, quota: quotaOf(bucket) };
    }
    return { admitted: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / limits.rateLimit)), quota: quotaOf(bucket) };
  }

  private dropFull(now: number): void {
    for (const [key, b] of this.buckets) {
      if (b.tokens + (now - b.at) * b.limits.rateLimit >= b.limits.burstLimit) this.buckets.delete(key);
    }
  }
}

const quotaOf = (b: Bucket): Quota => ({
  limit: b.limits.burstLimit,
  remaining: Math.floor(b.tokens),
  resetSeconds: Math.ceil((b.limits.burstLimit - b.tokens) / b.limits.rateLimit),
});
