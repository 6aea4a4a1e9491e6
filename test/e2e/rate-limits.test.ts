import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setAccountLimits } from '#shared/data/accounts';
import { CORS_EXPOSE_HEADERS } from '#shared/http/cors';
import { DEFAULT_ACCOUNT_LIMITS } from '#shared/rate-limits';
import { startApiServer, type RunningApi } from '../../scripts/local/http-server.ts';
import { accountRateLimiter } from '../../scripts/local/rate-limiter.ts';
import { aTenant, type Tenant } from '../steps/given.ts';
import { assertMatchesOpenApi } from '../steps/openapi.ts';

/**
 * The local gateway's per-account token bucket, over real HTTP, as `npm start`
 * serves it: one limiter behind both APIs, as one usage plan spans both on AWS.
 * Account A has its own limit of 3 requests (burst) refilled at one per 1,000 s,
 * so the 4th request is over it whatever the machine's speed.
 */
describe('per-account rate limits over HTTP (npm start local gateway)', () => {
  let messaging: RunningApi;
  let email: RunningApi;
  let a: Tenant;
  let b: Tenant;

  beforeAll(async () => {
    const limiter = accountRateLimiter();
    [messaging, email] = await Promise.all([
      startApiServer('messaging', 0, undefined, undefined, limiter),
      startApiServer('email', 0, undefined, undefined, limiter),
    ]);
    [a, b] = await Promise.all([aTenant(), aTenant()]);
    // As `npm run admin -- account limits --account A --rate 0.001 --burst 3` does.
    expect(await setAccountLimits(a.accountId, { rateLimit: 0.001, burstLimit: 3 })).toBe(true);
  });
  afterAll(async () => {
    await Promise.all([messaging?.close(), email?.close()]);
  });

  /** The RateLimit fields; `reset` (seconds until the bucket is full again) to a tenth of `resetScale`, as the requests take time. */
  const quota = (headers: Headers, resetScale = 1) => ({
    limit: Number(headers.get('ratelimit-limit')),
    remaining: Number(headers.get('ratelimit-remaining')),
    reset: Math.round((Number(headers.get('ratelimit-reset')) / resetScale) * 10) / 10,
  });

  const get = async (server: RunningApi, path: string, tenant: Tenant) => {
    const res = await fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${tenant.token}` } });
    const body = await res.json();
    assertMatchesOpenApi('GET', path, res.status, body);
    return { status: res.status, headers: res.headers, body };
  };

  it('throttles account A past its limit, counted across both APIs, while account B is served at the same moment', async () => {
    // Given A spends its 3 requests on both APIs, each answer telling what is left (the IETF RateLimit fields)
    const spent = [
      await get(messaging, '/v1/conversations', a),
      await get(email, '/api/v1/emailLists', a),
      await get(messaging, '/v1/conversations', a),
    ];
    expect(spent.map((r) => r.status)).toEqual([200, 200, 200]);
    // (one request a 1,000 s to refill)
    expect(spent.map((r) => quota(r.headers, 1000))).toEqual([
      { limit: 3, remaining: 2, reset: 1 },
      { limit: 3, remaining: 1, reset: 2 },
      { limit: 3, remaining: 0, reset: 3 },
    ]);

    // When A and B call at the same moment
    const [overA, forB, forBEmail, overAEmail] = await Promise.all([
      get(messaging, '/v1/conversations', a),
      get(messaging, '/v1/conversations', b),
      get(email, '/api/v1/emailLists', b),
      get(email, '/api/v1/emailLists', a),
    ]);

    // Then A gets 429 in the error envelope with Retry-After, on either API; B is served
    for (const over of [overA, overAEmail]) {
      expect(over.status).toBe(429);
      expect(over.body).toEqual({ error: { type: 'rate_limit_error', code: 'rate_limited', message: expect.any(String) } });
      expect(over.headers.get('content-type')).toMatch(/application\/json/);
      expect(over.headers.get('x-request-id')).toBeTruthy();
      // One token at 0.001 per second: about 1,000 s away.
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(900);
      expect(Number(over.headers.get('retry-after'))).toBeLessThanOrEqual(1000);
      expect(quota(over.headers, 1000)).toEqual({ limit: 3, remaining: 0, reset: 3 });
    }
    expect(forB.status).toBe(200);
    expect(forBEmail.status).toBe(200);
  });

  it('gives B, on the default limit, its whole burst of 100 and then some', async () => {
    expect(DEFAULT_ACCOUNT_LIMITS).toEqual({ rateLimit: 50, burstLimit: 100 });
    const c = await aTenant();
    const statuses = await Promise.all(Array.from({ length: 100 }, () => get(messaging, '/v1/conversations', c).then((r) => r.status)));
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  });

  it('refuses a bad token before counting it against anyone, and so without RateLimit fields', async () => {
    const res = await fetch(`${messaging.url}/v1/conversations`, { headers: { Authorization: 'Bearer tok_nope' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('ratelimit-remaining')).toBeNull();
  });

  it("puts the RateLimit fields on a handler's error answer too, and lets a browser read them", async () => {
    // Given an account on the default limit
    const c = await aTenant();
    // When it asks for a conversation that does not exist
    const res = await get(messaging, '/v1/conversations/conv_01JD0000000000000000000000', c);
    // Then the 404 carries where its budget stands
    expect(res.status).toBe(404);
    expect(quota(res.headers)).toEqual({ limit: 100, remaining: 99, reset: 1 });
    expect(CORS_EXPOSE_HEADERS).toEqual(
      expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After']),
    );
  });
});
