import { describe, expect, it } from 'vitest';
import { TokenBuckets, usageKeyValue } from '#shared/rate-limits';

/** A clock the test moves by hand: the bucket's arithmetic without timings. */
const clock = () => {
  let now = 0;
  return { now: () => now, advance: (seconds: number) => (now += seconds) };
};

describe('token buckets (the local twin of the usage plans)', () => {
  const limits = { rateLimit: 2, burstLimit: 3 };

  it('admits a burst, refuses the next request with the seconds until a token, then refills at the rate', () => {
    const time = clock();
    const buckets = new TokenBuckets(time.now);
    for (let i = 0; i < 3; i++) expect(buckets.take('A', limits)).toMatchObject({ admitted: true });
    expect(buckets.take('A', limits)).toMatchObject({ admitted: false, retryAfterSeconds: 1 });
    time.advance(0.5); // one token at 2 per second
    expect(buckets.take('A', limits)).toMatchObject({ admitted: true });
    expect(buckets.take('A', limits).admitted).toBe(false);
    time.advance(100); // never more than the burst
    for (let i = 0; i < 3; i++) expect(buckets.take('A', limits).admitted).toBe(true);
    expect(buckets.take('A', limits).admitted).toBe(false);
  });

  it('keeps one bucket per key: one account at its limit leaves another untouched', () => {
    const buckets = new TokenBuckets(clock().now);
    for (let i = 0; i < 3; i++) buckets.take('A', limits);
    expect(buckets.take('A', limits).admitted).toBe(false);
    expect(buckets.take('B', limits)).toMatchObject({ admitted: true });
  });

  it('rounds Retry-After up to whole seconds, at least 1', () => {
    const buckets = new TokenBuckets(clock().now);
    const slow = { rateLimit: 0.1, burstLimit: 1 };
    buckets.take('A', slow);
    expect(buckets.take('A', slow)).toMatchObject({ admitted: false, retryAfterSeconds: 10 });
  });

  it('tells after each request the burst, the whole requests left and the seconds until the bucket is full again', () => {
    const time = clock();
    const buckets = new TokenBuckets(time.now);
    // Given a burst of 3 refilled at 2 per second
    // Then each request counts down, and the time to refill grows by half a second a request
    expect(buckets.take('A', limits).quota).toEqual({ limit: 3, remaining: 2, resetSeconds: 1 });
    expect(buckets.take('A', limits).quota).toEqual({ limit: 3, remaining: 1, resetSeconds: 1 });
    expect(buckets.take('A', limits).quota).toEqual({ limit: 3, remaining: 0, resetSeconds: 2 });
    // And a refused request says the same: nothing left, full again in 1.5 s (rounded up)
    expect(buckets.take('A', limits)).toEqual({
      admitted: false,
      retryAfterSeconds: 1,
      quota: { limit: 3, remaining: 0, resetSeconds: 2 },
    });
    time.advance(0.75);
    expect(buckets.take('A', limits).quota).toEqual({ limit: 3, remaining: 0, resetSeconds: 2 });
    time.advance(100);
    expect(buckets.take('A', limits).quota).toEqual({ limit: 3, remaining: 2, resetSeconds: 1 });
  });

  it('drops refilled buckets once it holds too many keys', () => {
    const time = clock();
    const buckets = new TokenBuckets(time.now, 2);
    buckets.take('A', limits);
    buckets.take('B', limits);
    time.advance(10);
    buckets.take('C', limits);
    // A and B had refilled: forgetting them changes nothing for their next request; C keeps its count.
    expect(buckets.size).toBe(1);
    buckets.take('C', limits);
    buckets.take('C', limits);
    expect(buckets.take('C', limits).admitted).toBe(false);
  });
});

describe('usage key values', () => {
  it('are 20 to 128 alphanumeric characters, one per account', () => {
    const key = usageKeyValue('acct_01JD0000000000000000000000');
    expect(key).toBe('acct01JD0000000000000000000000');
    expect(key).toMatch(/^[A-Za-z0-9]{20,128}$/);
    expect(usageKeyValue('acct_01JD0000000000000000000001')).not.toBe(key);
  });
});
