import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedPartition } from '#shared/data/events';
import { createSecretKey } from '#shared/data/secret-keys';
import { feedEventId } from '#shared/data/event-ids';
import { aTenant, anotherUserOf, type Tenant } from '../steps/given.ts';
import { apiClient, transports, type ApiClient } from '../steps/when.ts';

/**
 * The platform endpoints belong to the account: another account's secret key
 * meets the owner's ids exactly as ids that never existed (404), and a user
 * token of the owner's own account is refused (403) wherever the secret key
 * is required. Nothing of the owner's changes.
 */
describe.each(transports())('platform tenancy over %s', (transport) => {
  let api: ApiClient;
  let owner: Tenant;
  let intruder: { token: string };
  let user: { token: string };
  let ids: Record<string, string>;

  beforeAll(async () => {
    // Loopback receivers, as npm start allows (no resolver here for a public name).
    process.env.ALLOW_PRIVATE_WEBHOOKS = 'true';
    api = await apiClient('messaging', transport);
    owner = await aTenant();
    intruder = { token: (await createSecretKey((await aTenant()).accountId)).secret_key };
    user = await anotherUserOf(owner);
    const token = await api.call('POST', `/v1/contacts/${owner.contactIds.bob}/tokens`, { token: owner.secretKey, form: {} });
    const webhook = await api.call('POST', '/v1/webhook_endpoints', { token: owner.secretKey, form: { url: 'http://127.0.0.1:9/hook' } });
    expect([token.status, webhook.status]).toEqual([201, 201]);
    ids = { contact: owner.contactIds.bob!, group: owner.groupId, token: token.body.id, webhook: webhook.body.id };
  });
  afterAll(() => api.close());

  const fill = (path: string) =>
    path
      .replace('/v1/contacts/{id}', `/v1/contacts/${ids.contact}`)
      .replace('{token_id}', ids.token!)
      .replace('/v1/groups/{id}', `/v1/groups/${ids.group}`)
      .replace('{contact_id}', ids.contact!)
      .replace('/v1/webhook_endpoints/{id}', `/v1/webhook_endpoints/${ids.webhook}`);

  const attempts: [string, string, Record<string, string>?][] = [
    ['GET', '/v1/contacts/{id}'],
    ['PUT', '/v1/contacts/{id}', { username: 'stolen' }],
    ['DELETE', '/v1/contacts/{id}'],
    ['POST', '/v1/contacts/{id}/tokens', {}],
    ['GET', '/v1/contacts/{id}/tokens'],
    ['DELETE', '/v1/contacts/{id}/tokens/{token_id}'],
    ['GET', '/v1/groups/{id}'],
    ['PUT', '/v1/groups/{id}', { name: 'stolen' }],
    ['DELETE', '/v1/groups/{id}'],
    ['POST', '/v1/groups/{id}/members', { contact_id: 'ct_01J00000000000000000000000' }],
    ['GET', '/v1/groups/{id}/members'],
    ['DELETE', '/v1/groups/{id}/members/{contact_id}'],
    ['GET', '/v1/webhook_endpoints/{id}'],
    ['PUT', '/v1/webhook_endpoints/{id}', { url: 'https://example.com/stolen' }],
    ['DELETE', '/v1/webhook_endpoints/{id}'],
    ['POST', '/v1/webhook_endpoints/{id}/rotate_secret', {}],
  ];

  const snapshot = async () => ({
    contact: (await api.call('GET', `/v1/contacts/${ids.contact}`, { token: owner.secretKey })).body,
    tokens: (await api.call('GET', `/v1/contacts/${ids.contact}/tokens`, { token: owner.secretKey })).body,
    group: (await api.call('GET', `/v1/groups/${ids.group}`, { token: owner.secretKey })).body,
    members: (await api.call('GET', `/v1/groups/${ids.group}/members`, { token: owner.secretKey })).body,
    webhook: (await api.call('GET', `/v1/webhook_endpoints/${ids.webhook}`, { token: owner.secretKey })).body,
  });

  it("answers another account's secret key 404 on every id of the owner's, and changes nothing", async () => {
    const before = await snapshot();
    for (const [method, path, form] of attempts) {
      const res = await api.call(method, fill(path), { token: intruder.token, ...(form ? { form } : {}) });
      expect({ method, path, status: res.status, code: res.body.error?.code }).toEqual({
        method,
        path,
        status: 404,
        code: 'resource_missing',
      });
    }
    expect(await snapshot()).toEqual(before);
  });

  it("answers a user token of the owner's account 403 wherever the secret key is required", async () => {
    for (const [method, path, form] of attempts.filter(([m, p]) => !(m === 'GET' && p === '/v1/contacts/{id}'))) {
      const res = await api.call(method, fill(path), { token: user.token, ...(form ? { form } : {}) });
      expect({ method, path, status: res.status, code: res.body.error?.code }).toEqual({
        method,
        path,
        status: 403,
        code: 'secret_key_required',
      });
    }
  });

  it("lists only the intruder's own records, and creates in the intruder's own account", async () => {
    const contacts = await api.call('GET', '/v1/contacts', { token: intruder.token, query: { limit: 100 } });
    const groups = await api.call('GET', '/v1/groups', { token: intruder.token, query: { limit: 100 } });
    const webhooks = await api.call('GET', '/v1/webhook_endpoints', { token: intruder.token });
    const account = await api.call('GET', '/v1/account', { token: intruder.token });
    expect(contacts.body.data.map((c: { id: string }) => c.id)).not.toContain(ids.contact);
    expect(groups.body.data.map((g: { id: string }) => g.id)).not.toContain(ids.group);
    expect(webhooks.body.data.map((w: { id: string }) => w.id)).not.toContain(ids.webhook);
    expect(account.body.id).not.toBe(owner.accountId);
    // Creates land in the intruder's account: the owner's usernames are not taken there
    const contact = await api.call('POST', '/v1/contacts', { token: intruder.token, form: { username: 'dave' } });
    expect(contact.status).toBe(201);
    const group = await api.call('POST', '/v1/groups', { token: intruder.token, json: { name: 'x', members: [ids.contact] } });
    expect(group.status).toBe(404);
    const webhook = await api.call('POST', '/v1/webhook_endpoints', { token: intruder.token, form: { url: 'http://127.0.0.1:9/x' } });
    expect(webhook.status).toBe(201);
  });
});

describe.each(transports())('events feed tenancy over %s', (transport) => {
  it("takes no cursor of another account's feed, or of another user's, and lists only the caller's own events", async () => {
    const api = await apiClient('messaging', transport);
    // Given the owner's account feed and bob's feed, each with an event numbered 1
    const owner = await aTenant();
    const intruder = { token: (await createSecretKey((await aTenant()).accountId)).secret_key };
    const dave = await anotherUserOf(owner);
    const accountCursor = feedEventId(feedPartition({ accountId: owner.accountId }), 1, Date.now());
    const bobCursor = feedEventId(feedPartition({ accountId: owner.accountId, contactId: owner.contactIds.bob! }), 1, Date.now());
    // When another account's backend, or another user of the owner's account, reads on from them
    const fromAccount = await api.call('GET', `/v1/events?after=${accountCursor}`, { token: intruder.token });
    const fromBob = await api.call('GET', `/v1/events?after=${bobCursor}`, { token: dave.token });
    const fromAccountAsUser = await api.call('GET', `/v1/events?after=${accountCursor}`, { token: dave.token });
    // Then each is no event of the caller's own feed: 400 on `after`, nothing leaked
    for (const res of [fromAccount, fromBob, fromAccountAsUser]) expect([res.status, res.body.error?.param]).toEqual([400, 'after']);
    // And from the start, each reads its own (empty) feed
    expect((await api.call('GET', '/v1/events', { token: intruder.token })).body).toEqual({ has_more: false, data: [] });
    await api.close();
  });
});

describe.each(transports('email'))('email account over %s', (transport) => {
  let api: ApiClient;
  it("shows the caller's own account only", async () => {
    api = await apiClient('email', transport);
    const owner = await aTenant();
    const intruder = { token: (await createSecretKey((await aTenant()).accountId)).secret_key };
    const mine = await api.call('GET', '/api/v1/account', { token: owner.secretKey });
    expect(mine.body.id).toBe(owner.accountId);
    const theirs = await api.call('GET', '/api/v1/account', { token: intruder.token });
    expect(theirs.body.id).not.toBe(owner.accountId);
    // A user token works on the email API too
    expect((await api.call('GET', '/api/v1/account', { token: owner.token })).body.id).toBe(owner.accountId);
    await api.close();
  });
});
