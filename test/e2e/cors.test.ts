import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CORS_ALLOW_HEADERS } from '#shared/http/cors';
import { apiMethods } from '#shared/routes';
import { aTenant, type Tenant } from '../steps/given.ts';
import { scopedEnv } from '../steps/scoped-env.ts';
import { apiClient, type ApiClient } from '../steps/when.ts';

const app = 'https://app.example.com';
const other = 'https://evil.example.net';

/** The local server: preflights from the local API Gateway adapter, the other headers from the functions themselves. */
describe('CORS locally (CORS_ORIGINS)', () => {
  const env = scopedEnv(() => undefined);
  const clients: Record<'messaging' | 'email', ApiClient | undefined> = { messaging: undefined, email: undefined };
  let t: Tenant;
  beforeAll(async () => {
    clients.messaging = await apiClient('messaging', 'http');
    clients.email = await apiClient('email', 'http');
    t = await aTenant();
  });
  afterEach(() => env.restore());
  afterAll(async () => {
    await clients.messaging?.close();
    await clients.email?.close();
  });

  const cases = [
    ['messaging', '/v1/conversations'],
    ['email', '/api/v1/emailLists'],
  ] as const;

  it.each(cases)('%s: unset, no CORS header anywhere and OPTIONS stays 405', async (api, path) => {
    const ok = await clients[api]!.call('GET', path, { token: t.token, headers: { Origin: app } });
    expect(ok.status).toBe(200);
    expect(Object.keys(ok.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    const preflight = await clients[api]!.call('OPTIONS', path, { headers: { Origin: app, 'Access-Control-Request-Method': 'POST' } });
    expect(preflight.status).toBe(405);
  });

  it.each(cases)('%s: answers the preflight for an allowed origin, without a token', async (api, path) => {
    env.set({ CORS_ORIGINS: `${app}, https://admin.example.com` });
    const preflight = await clients[api]!.call('OPTIONS', path, { headers: { Origin: app, 'Access-Control-Request-Method': 'POST' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': app,
      'access-control-allow-headers': CORS_ALLOW_HEADERS.join(','),
      'access-control-allow-methods': [...apiMethods(api), 'OPTIONS'].join(','),
      vary: 'Origin',
    });
    const refused = await clients[api]!.call('OPTIONS', path, { headers: { Origin: other, 'Access-Control-Request-Method': 'POST' } });
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
  });

  it.each(cases)('%s: every response carries the headers for an allowed origin, errors included', async (api, path) => {
    env.set({ CORS_ORIGINS: app });
    const answers = [
      await clients[api]!.call('GET', path, { token: t.token, headers: { Origin: app } }), // 200 from the function
      await clients[api]!.call('GET', `${path}?colour=red`, { token: t.token, headers: { Origin: app } }), // 400 from the function
      await clients[api]!.call('GET', path, { headers: { Origin: app } }), // 401 from the gateway
      await clients[api]!.call('PATCH', path, { token: t.token, headers: { Origin: app } }), // 405 from the fallback
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 400, 401, 405]);
    for (const answer of answers) {
      expect(answer.headers['access-control-allow-origin']).toBe(app);
      expect(answer.headers['access-control-expose-headers']).toContain('X-Request-Id');
    }
    const foreign = await clients[api]!.call('GET', path, { token: t.token, headers: { Origin: other } });
    expect(foreign.status).toBe(200);
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
  });

  it.each(cases)("%s: with several origins, the gateway's 401 echoes the Origin and says it varies by it", async (api, path) => {
    env.set({ CORS_ORIGINS: `${app}, https://admin.example.com` });
    const refused = await clients[api]!.call('GET', path, { headers: { Origin: app } });
    expect(refused.status).toBe(401);
    expect(refused.headers).toMatchObject({ 'access-control-allow-origin': app, vary: 'Origin' });
  });

  it('allows any origin with *', async () => {
    env.set({ CORS_ORIGINS: '*' });
    const res = await clients.messaging!.call('GET', '/v1/conversations', { token: t.token, headers: { Origin: other } });
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });
});
