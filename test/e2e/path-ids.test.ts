import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes, type ApiName } from '#shared/routes';
import { aTenant, type Tenant } from '../steps/given.ts';
import { byCommand, countDynamoCalls } from '../steps/dynamodb-calls.ts';
import { apiClient, type ApiClient } from '../steps/when.ts';

/** What each path's id names, as its 404 says. */
const RESOURCES: [prefix: string, resource: string][] = [
  ['/v1/conversations/', 'conversation'],
  ['/v1/messages/', 'message'],
  ['/v1/files/', 'file'],
  ['/v1/contacts/', 'contact'],
  ['/v1/groups/', 'group'],
  ['/v1/webhook_endpoints/', 'webhook endpoint'],
  ['/api/v1/email/', 'email'],
  ['/api/v1/emailList/', 'email list'],
];
const resourceOf = (path: string) => RESOURCES.find(([prefix]) => path.startsWith(prefix))![1];

const withId = routes.filter((r) => r.path.includes('{id}'));
/** A second id of the path, well-formed (the first one's 404 is the case). */
const otherIds = (path: string) =>
  path.replace('{token_id}', 'tok_01J00000000000000000000000').replace('{contact_id}', 'ct_01J00000000000000000000000');
const bodyFor = (method: string, path: string, api: ApiName) =>
  method === 'POST'
    ? {
        json:
          api === 'email'
            ? path.endsWith('/emails')
              ? { emails: ['a@example.com'] }
              : {}
            : path.endsWith('/members')
              ? { contact_id: 'ct_01J00000000000000000000000' }
              : {},
      }
    : method === 'PUT'
      ? { json: {} }
      : {};

describe('typed path ids', () => {
  const clients: Partial<Record<ApiName, ApiClient>> = {};
  let t: Tenant;
  beforeAll(async () => {
    clients.messaging = await apiClient('messaging', 'handler');
    clients.email = await apiClient('email', 'handler');
    t = await aTenant();
  });
  afterAll(async () => {
    await clients.messaging?.close();
    await clients.email?.close();
  });

  it('covers every route with an id in its path', () => {
    expect(withId.length).toBe(33);
  });

  it.each(withId.map((r) => [r.method, r.path, r.api, r.credential] as const))(
    '%s %s: an id that cannot be one is 404 before the domain reads anything',
    async (method, path, api, credential) => {
      const token = credential === 'secret' ? t.secretKey : t.token;
      for (const id of ['not-an-id', '0', '12x', 'conv_short', 'msg_01JD000000000000000000000!']) {
        // When the path carries a malformed id
        const { result: res, calls } = await countDynamoCalls(() =>
          clients[api]!.call(method, otherIds(path).replace('{id}', encodeURIComponent(id)), { token, ...bodyFor(method, path, api) }),
        );
        // Then it answers as for an unknown id, naming the resource and the id
        expect(res.status).toBe(404);
        expect(res.body.error).toEqual({
          type: 'invalid_request_error',
          code: 'resource_missing',
          message: `No such ${resourceOf(path)}: '${id}'`,
          param: 'id',
        });
        // And nothing but the token's lookup touched the table
        expect(Object.keys(byCommand(calls)).filter((c) => c !== 'GetItem')).toEqual([]);
        expect(calls.length).toBeLessThanOrEqual(1);
      }
    },
  );
});
