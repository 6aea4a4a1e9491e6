import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aTenant, type Tenant } from '../steps/given.ts';
import { apiClient, transports, type ApiClient } from '../steps/when.ts';

/** Another account's ids must look exactly like ids that never existed, and nothing of theirs may change. */
describe.each(transports())('tenancy over %s', (transport) => {
  let api: ApiClient;
  let owner: Tenant;
  let intruder: Tenant;
  let conv: { id: string };
  let msg: { id: string };

  beforeAll(async () => {
    api = await apiClient('chat', transport);
    [owner, intruder] = await Promise.all([aTenant(), aTenant()]);
    conv = (await api.call('POST', '/v1/conversations', { token: owner.token, form: { contact_id: owner.contactIds.bob! } })).body;
    msg = (await api.call('POST', '/v1/messages', { token: owner.token, form: { conversation_id: conv.id, message: 'private' } })).body;
  });
  afterAll(() => api.close());

  const snapshot = async () => ({
    conversation: (await api.call('GET', `/v1/conversations/${conv.id}`, { token: owner.token })).body,
    message: (await api.call('GET', `/v1/messages/${msg.id}`, { token: owner.token })).body,
    conversations: (await api.call('GET', '/v1/conversations', { token: owner.token })).body,
    messages: (await api.call('GET', '/v1/messages', { token: owner.token })).body,
  });

  const attempts: [string, string, () => Record<string, unknown>, string?][] = [
    ['GET', '/v1/conversations/{conv}', () => ({})],
    ['PUT', '/v1/conversations/{conv}', () => ({ form: { is_muted: 'true', archived_at: '1700000000' } })],
    ['DELETE', '/v1/conversations/{conv}', () => ({})],
    ['GET', '/v1/messages/{msg}', () => ({})],
    ['PUT', '/v1/messages/{msg}', () => ({ form: { message: 'hijacked', 'reactions[x][]': 'eve' } })],
    ['DELETE', '/v1/messages/{msg}', () => ({})],
    ['POST', '/v1/messages', () => ({ form: { conversation_id: conv.id, message: 'sneaky' } }), 'conversation_id'],
    ['GET', '/v1/messages', () => ({ query: { conversation_id: conv.id } }), 'conversation_id'],
    ['POST', '/v1/conversations', () => ({ form: { contact_id: owner.contactIds.bob! } }), 'contact_id'],
    ['POST', '/v1/conversations', () => ({ form: { group_id: owner.groupId } }), 'group_id'],
  ];

  it.each(attempts.map(([method, path, options, param]) => [method, path, options, param]))(
    "%s %s with another account's ids answers 404 and changes nothing",
    async (method, path, options, param) => {
      const before = await snapshot();
      const res = await api.call(method as string, (path as string).replace('{conv}', conv.id).replace('{msg}', msg.id), {
        token: intruder.token,
        ...(options as () => Record<string, unknown>)(),
      });
      expect(res.status).toBe(404);
      expect(res.body.error.type).toBe('invalid_request_error');
      if (param) expect(res.body.error.param).toBe(param);
      // The same answer as for an id that never existed: no existence leak.
      expect(res.body.error.message).not.toMatch(/another account|forbidden|permission/i);
      expect(await snapshot()).toEqual(before);
    },
  );

  it("never lists another account's records", async () => {
    const convs = await api.call('GET', '/v1/conversations', { token: intruder.token, query: { limit: 100 } });
    const msgs = await api.call('GET', '/v1/messages', { token: intruder.token, query: { limit: 100 } });
    expect(convs.body.data).toEqual([]);
    expect(msgs.body.data).toEqual([]);
    const byGroup = await api.call('GET', '/v1/conversations', { token: intruder.token, query: { group_id: owner.groupId } });
    expect(byGroup.body.data).toEqual([]);
  });

  it("rejects another account's ids as cursors", async () => {
    const res = await api.call('GET', '/v1/conversations', { token: intruder.token, query: { starting_after: conv.id } });
    expect(res.status).toBe(400);
    const msgs = await api.call('GET', '/v1/messages', { token: intruder.token, query: { ending_before: msg.id } });
    expect(msgs.status).toBe(400);
  });

  it("cannot pin another account's message", async () => {
    const own = (await api.call('POST', '/v1/conversations', { token: intruder.token, form: { contact_id: intruder.contactIds.bob! } })).body;
    const res = await api.call('PUT', `/v1/conversations/${own.id}`, { token: intruder.token, form: { pinned_message_id: msg.id } });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('pinned_message_id');
  });
});
