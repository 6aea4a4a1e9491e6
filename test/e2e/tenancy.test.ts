import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember } from '#shared/data/group-members';
import { aTenant, anotherUserOf, type Tenant } from '../steps/given.ts';
import { apiClient, transports, type ApiClient } from '../steps/when.ts';

/** Someone trying the owner's records: what they hold, and whom they can talk to in their own account. */
interface Intruder {
  token: string;
  contactId: string;
  groupId: string;
}

const intruders: Record<string, (owner: Tenant) => Promise<Intruder>> = {
  'another account': async () => {
    const other = await aTenant();
    return { token: other.token, contactId: other.contactIds.bob!, groupId: other.groupId };
  },
  // Contacts and groups are the account's, so this user can open conversations with the owner's bob and, as a member, group.
  'another user of the same account': async (owner) => {
    const user = await anotherUserOf(owner);
    await addMember(owner.accountId, owner.groupId, user.contact.id);
    return { token: user.token, contactId: owner.contactIds.bob!, groupId: owner.groupId };
  },
};

/**
 * Conversations, and the messages, pins and read state in them, belong to
 * the user: another account's and another user's ids must look exactly like
 * ids that never existed, and nothing of the owner's may change.
 */
const cases = transports().flatMap((transport) => Object.keys(intruders).map((who) => [transport, who] as const));

describe.each(cases)('tenancy over %s: %s', (transport, who) => {
  let api: ApiClient;
  let owner: Tenant;
  let intruder: Intruder;
  let conv: { id: string };
  let msg: { id: string; message: string };
  let file: { id: string };
  const sendKey = 'owner-send-1';
  const sendForm = () => ({ conversation_id: conv.id, message: 'private' });

  beforeAll(async () => {
    api = await apiClient('messaging', transport);
    owner = await aTenant();
    intruder = await intruders[who]!(owner);
    conv = (await api.call('POST', '/v1/conversations', { token: owner.token, form: { contact_id: owner.contactIds.bob! } })).body;
    await api.call('POST', '/v1/conversations', { token: owner.token, form: { group_id: owner.groupId } });
    msg = (await api.call('POST', '/v1/messages', { token: owner.token, form: sendForm(), headers: { 'Idempotency-Key': sendKey } })).body;
    await api.call('PUT', `/v1/conversations/${conv.id}`, { token: owner.token, form: { pinned_message_id: msg.id, opened: 'true' } });
    await api.call('PUT', `/v1/messages/${msg.id}`, { token: owner.token, form: { read: 'true', 'reactions[ok][]': 'alice' } });
    file = (await api.call('POST', '/v1/files', { token: owner.token, form: { name: 'a.txt', content_type: 'text/plain', size: 2 } })).body;
    const upload = (file as unknown as { upload: { url: string; headers: Record<string, string> } }).upload;
    expect((await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: 'hi' })).status).toBe(200);
  });
  afterAll(() => api.close());

  const snapshot = async () => ({
    conversation: (await api.call('GET', `/v1/conversations/${conv.id}`, { token: owner.token })).body,
    message: (await api.call('GET', `/v1/messages/${msg.id}`, { token: owner.token })).body,
    conversations: (await api.call('GET', '/v1/conversations', { token: owner.token })).body,
    messages: (await api.call('GET', '/v1/messages', { token: owner.token })).body,
    inConversation: (await api.call('GET', '/v1/messages', { token: owner.token, query: { conversation_id: conv.id } })).body,
  });

  const attempts: [string, string, () => Record<string, unknown>, string?][] = [
    ['GET', '/v1/conversations/{conv}', () => ({})],
    ['PUT', '/v1/conversations/{conv}', () => ({ form: { is_muted: 'true', archived_at: '1700000000', pinned_message_id: '' } })],
    ['PUT', '/v1/conversations/{conv}', () => ({ form: { opened: 'true' } })],
    ['DELETE', '/v1/conversations/{conv}', () => ({})],
    ['GET', '/v1/messages/{msg}', () => ({})],
    ['PUT', '/v1/messages/{msg}', () => ({ form: { message: 'hijacked', 'reactions[x][]': 'eve' } })],
    ['PUT', '/v1/messages/{msg}', () => ({ form: { reactions: '', attachments: '', read: 'true' } })],
    ['DELETE', '/v1/messages/{msg}', () => ({})],
    ['GET', '/v1/files/{file}', () => ({})],
    ['POST', '/v1/messages', () => ({ form: { conversation_id: conv.id, message: 'sneaky' } }), 'conversation_id'],
    ['GET', '/v1/messages', () => ({ query: { conversation_id: conv.id } }), 'conversation_id'],
    ['GET', '/v1/messages', () => ({ query: { conversation_id: conv.id, starting_after: msg.id } }), 'conversation_id'],
  ];

  it("never replays the owner's send to the owner's request under the owner's key: the key is the account's", async () => {
    const before = await snapshot();
    // When the intruder sends the owner's very request under the owner's Idempotency-Key
    const res = await api.call('POST', '/v1/messages', {
      token: intruder.token,
      form: sendForm(),
      headers: { 'Idempotency-Key': sendKey },
    });
    // Then another account's request is its own (and the conversation is not theirs: 404); another user of the
    // account finds the key taken by a request that was not theirs: 422. Neither sees the owner's message.
    if (who === 'another account') {
      expect(res.status).toBe(404);
      expect(res.body.error.param).toBe('conversation_id');
    } else {
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('idempotency_key_reused');
    }
    expect(res.text).not.toContain(msg.id);
    expect(await snapshot()).toEqual(before);
  });

  it.each(attempts)("%s %s with the owner's ids answers 404 and changes nothing", async (method, path, options, param) => {
    const before = await snapshot();
    const res = await api.call(method, path.replace('{conv}', conv.id).replace('{msg}', msg.id).replace('{file}', file.id), {
      token: intruder.token,
      ...options(),
    });
    expect(res.status).toBe(404);
    expect(res.body.error.type).toBe('invalid_request_error');
    if (param) expect(res.body.error.param).toBe(param);
    // The same answer as for an id that never existed: no existence leak.
    expect(res.body.error.message).not.toMatch(/another (account|user)|forbidden|permission|owner/i);
    expect(await snapshot()).toEqual(before);
  });

  it.each([['contact_id'], ['group_id']])("opening a conversation by %s gives their own, never the owner's", async (param) => {
    const before = await snapshot();
    const form = { [param!]: param === 'contact_id' ? intruder.contactId : intruder.groupId };
    const first = await api.call('POST', '/v1/conversations', { token: intruder.token, form });
    expect(first.status).toBe(201);
    expect(first.body.id).not.toBe(conv.id);
    expect(first.body).toMatchObject({ pinned_message_id: null, last_opened_at: null, last_active_at: null });
    const again = await api.call('POST', '/v1/conversations', { token: intruder.token, form });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    // And theirs is as invisible to the owner as the owner's is to them.
    expect((await api.call('GET', `/v1/conversations/${first.body.id}`, { token: owner.token })).status).toBe(404);
    expect(await snapshot()).toEqual(before);
  });

  it("never lists the owner's records", async () => {
    const ownerIds = [conv.id, msg.id];
    const queries: Record<string, string>[] = [
      {},
      { muted: 'false' },
      { pinned: 'false' },
      { archived: 'false' },
      { group_id: owner.groupId },
    ];
    for (const query of queries) {
      const convs = await api.call('GET', '/v1/conversations', { token: intruder.token, query: { ...query, limit: 100 } });
      expect(convs.status).toBe(200);
      expect(convs.body.data.filter((c: { id: string }) => ownerIds.includes(c.id))).toEqual([]);
    }
    const msgs = await api.call('GET', '/v1/messages', { token: intruder.token, query: { limit: 100 } });
    expect(msgs.body.data).toEqual([]);
  });

  it("cannot attach the owner's file, and what it uploads is its own", async () => {
    // Given the intruder's own conversation and own upload
    const own = (await api.call('POST', '/v1/conversations', { token: intruder.token, form: { contact_id: intruder.contactId } })).body;
    const form = { name: 'b.txt', content_type: 'text/plain', size: 1 };
    const upload = await api.call('POST', '/v1/files', { token: intruder.token, form });
    expect(upload.status).toBe(201);
    // Then the owner does not see it
    expect((await api.call('GET', `/v1/files/${upload.body.id}`, { token: owner.token })).status).toBe(404);
    // And attaching the owner's file is 404 naming the attachment, as for a file that never existed
    const res = await api.call('POST', '/v1/messages', {
      token: intruder.token,
      form: { conversation_id: own.id, message: 'mine now', 'attachments[0][file_id]': file.id },
    });
    expect(res.status).toBe(404);
    expect(res.body.error.param).toBe('attachments[0][file_id]');
  });

  it("rejects the owner's ids as cursors", async () => {
    const res = await api.call('GET', '/v1/conversations', { token: intruder.token, query: { starting_after: conv.id } });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('starting_after');
    const msgs = await api.call('GET', '/v1/messages', { token: intruder.token, query: { ending_before: msg.id } });
    expect(msgs.status).toBe(400);
    expect(msgs.body.error.param).toBe('ending_before');
  });

  it("cannot pin the owner's message in their own conversation", async () => {
    const own = (await api.call('POST', '/v1/conversations', { token: intruder.token, form: { contact_id: intruder.contactId } })).body;
    const res = await api.call('PUT', `/v1/conversations/${own.id}`, { token: intruder.token, form: { pinned_message_id: msg.id } });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('pinned_message_id');
  });
});
