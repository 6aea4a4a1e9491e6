import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeToken } from '#shared/data/tokens';
import { routes } from '#shared/routes';
import { aTenant, type Tenant } from '../steps/given.ts';
import { captureLogs } from '../steps/logs.ts';
import { apiClient, transports, type ApiClient } from '../steps/when.ts';

const messagingRoutes = routes.filter((r) => r.api === 'messaging');
const concrete = (path: string) => path.replace('{id}', 'conv_01JD0000000000000000000000');

describe.each(transports())('HTTP behaviour over %s', (transport) => {
  let api: ApiClient;
  let t: Tenant;

  beforeAll(async () => {
    api = await apiClient('messaging', transport);
    t = await aTenant();
  });
  afterAll(() => api.close());

  describe('authentication', () => {
    it.each(messagingRoutes.map((r) => [r.method, r.path]))('%s %s needs a bearer token', async (method, path) => {
      for (const token of [null, 'tok_not-a-real-token', '']) {
        const res = await api.call(method, concrete(path), { token });
        expect(res.status).toBe(401);
        expect(res.headers['www-authenticate']).toBe('Bearer');
        expect(res.headers['content-type']).toMatch(/application\/json/);
        expect(res.body.error).toMatchObject({ type: 'authentication_error' });
      }
    });

    it('rejects a malformed Authorization header', async () => {
      const res = await api.call('GET', '/v1/conversations', { headers: { Authorization: `Basic ${t.token}` } });
      expect(res.status).toBe(401);
    });

    // Locally at once; a deployed stack keeps the authorizer's answer up to AUTH_CACHE_SECONDS.
    it.runIf(transport !== 'remote')('stops accepting a revoked token at once', async () => {
      const tenant = await aTenant();
      expect((await api.call('GET', '/v1/conversations', { token: tenant.token })).status).toBe(200);
      await revokeToken(tenant.token);
      const res = await api.call('GET', '/v1/conversations', { token: tenant.token });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
    });
  });

  it.runIf(transport !== 'remote')('logs one structured JSON line per request, carrying its X-Request-Id', async () => {
    const logs = captureLogs();
    try {
      const res = await api.call('GET', '/v1/conversations', { token: t.token });
      expect(logs.lines()).toContainEqual(
        expect.objectContaining({
          level: 'INFO',
          message: 'request completed',
          request_id: res.headers['x-request-id'],
          account_id: t.accountId,
          path: '/v1/conversations',
          status: 200,
        }),
      );
    } finally {
      logs.stop();
    }
  });

  describe('routing', () => {
    it('answers 404 in the error envelope for an unknown route', async () => {
      for (const path of ['/v1/nope', '/v2/messages', '/', '/v1/messages/a/b']) {
        const res = await api.call('GET', path, { token: t.token });
        expect(res.status).toBe(404);
        expect(res.body.error.type).toBe('invalid_request_error');
        expect(res.headers['x-request-id']).toBeTruthy();
      }
    });

    it("answers 404, not 405, for the other API's paths", async () => {
      const res = await api.call('PATCH', '/api/v1/emails', { token: t.token });
      expect(res.status).toBe(404);
    });

    it('treats malformed or escaped ids as ids that name nothing', async () => {
      for (const id of ['%ZZ', '%25', '%2F']) {
        const res = await api.call('GET', `/v1/messages/${id}`, { token: t.token });
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('resource_missing');
      }
    });

    it('answers 405 with Allow for a known path and a wrong method', async () => {
      const res = await api.call('PATCH', '/v1/messages/msg_01JD0000000000000000000000', { token: t.token });
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET, PUT, DELETE');
      const post = await api.call('DELETE', '/v1/conversations', { token: t.token });
      expect(post.status).toBe(405);
      expect(post.headers.allow).toBe('GET, POST');
    });
  });

  describe('bodies', () => {
    it('gives the same result for form and JSON encodings', async () => {
      const form = await api.call('POST', '/v1/conversations', { token: t.token, form: { group_id: t.groupId } });
      const json = await api.call('POST', '/v1/conversations', { token: t.token, json: { group_id: t.groupId } });
      expect(json.body).toEqual(form.body);
    });

    it('answers 413 for a body over 256 KiB', async () => {
      const res = await api.call('POST', '/v1/conversations', {
        token: t.token,
        raw: { body: `contact_id=${'a'.repeat(256 * 1024)}`, contentType: 'application/x-www-form-urlencoded' },
      });
      expect(res.status).toBe(413);
      expect(res.body.error.type).toBe('invalid_request_error');
    });

    it('answers 415 for another content type', async () => {
      const res = await api.call('POST', '/v1/conversations', {
        token: t.token,
        raw: { body: '<contact_id/>', contentType: 'application/xml' },
      });
      expect(res.status).toBe(415);
    });

    it('answers 415 for a body in another charset or compressed, which would be read as garbage', async () => {
      // Given a body whose Content-Type names latin1, and one sent gzip-encoded
      const latin1 = await api.call('POST', '/v1/groups', {
        token: t.secretKey,
        raw: { body: '{"name":"caf"}', contentType: 'application/json; charset=latin1' },
      });
      const gzip = await api.call('POST', '/v1/groups', {
        token: t.secretKey,
        raw: { body: '{"name":"caf"}', contentType: 'application/json' },
        headers: { 'Content-Encoding': 'gzip' },
      });
      // Then both are refused as unsupported media
      expect([latin1.status, latin1.body.error.code]).toEqual([415, 'unsupported_media_type']);
      expect([gzip.status, gzip.body.error.code]).toEqual([415, 'unsupported_media_type']);
    });

    it('answers 400 naming the parameter for text that is not Unicode (a lone surrogate)', async () => {
      const res = await api.call('POST', '/v1/contacts', {
        token: t.secretKey,
        raw: { body: '{"username":"a\\ud800"}', contentType: 'application/json' },
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param: 'username' });
    });

    it('answers 400 for malformed JSON and for JSON that is not an object', async () => {
      for (const body of ['{"contact_id":', '[1,2]', '"x"', 'null']) {
        const res = await api.call('POST', '/v1/conversations', { token: t.token, raw: { body, contentType: 'application/json' } });
        expect(res.status).toBe(400);
        expect(res.body.error.type).toBe('invalid_request_error');
      }
    });
  });

  describe('no input produces a 5xx or leaks internals', () => {
    const hostile: { body?: string; contentType?: string; query?: Record<string, string>; id?: string }[] = [
      { body: 'a[b][c][d][e][f][g][h]=1' },
      { body: '__proto__[admin]=true&constructor[prototype][x]=1' },
      { body: 'message[]=a&message[]=b&conversation_id[x]=1' },
      { body: 'reactions[x][y][z]=1' },
      { body: 'attachments[999][url]=https://x.example.com' },
      { body: 'attachments[0]=string' },
      { body: 'reactions=%FF%FE' },
      { body: '%%%%' },
      { body: '{"message": {"$gt": ""}, "conversation_id": ["a"]}', contentType: 'application/json' },
      { body: '{"reactions": {"ok": [1, 2, {"a": 1}]}}', contentType: 'application/json' },
      { body: '{"attachments": [{"type": "image", "url": "https://x.example.com", "size": -1}]}', contentType: 'application/json' },
      { body: '{"archived_at": 1e400, "is_pinned": "TRUE"}', contentType: 'application/json' },
      { body: 'x', contentType: 'multipart/form-data; boundary=x' },
      { query: { limit: '9'.repeat(400) } },
      { query: { limit: '-1', starting_after: '\u0000' } },
      { query: { conversation_id: '../../etc/passwd' } },
      { id: '%E2%80%AE' },
      { id: 'x'.repeat(2000) },
      { id: "conv_'; DROP TABLE" },
    ];

    it.each(messagingRoutes.map((r) => [r.method, r.path]))('%s %s', async (method, path) => {
      for (const input of hostile) {
        const url = path.replace('{id}', input.id ?? 'msg_01JD0000000000000000000000');
        const res = await api.call(method, url, {
          token: t.token,
          query: input.query,
          ...(input.body !== undefined
            ? { raw: { body: input.body, contentType: input.contentType ?? 'application/x-www-form-urlencoded' } }
            : {}),
        });
        expect(res.status, `${method} ${url} ${JSON.stringify(input)}`).toBeLessThan(500);
        expect(res.text).not.toMatch(/at .*\.ts:\d+|Exception|TypeError|ReferenceError|dynamodb/i);
        if (res.status >= 400) expect(res.body?.error, `${res.status} ${res.text} ${JSON.stringify(input)}`).toBeDefined();
        if (res.status >= 400) expect(Object.keys(res.body.error).sort()).toEqual(expect.arrayContaining(['code', 'message', 'type']));
      }
    });
  });
});
